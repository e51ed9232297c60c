import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-run-steps-not-run')

const config = { request: { method: 'GET', path: '/api/sandbox/config' } }
const scenario = (steps: unknown[]) => JSON.stringify({ name: 'Wrong status', description: 'expects 201 where the API answers 200', steps })
const WRONG = { ...config, name: 'wrong status', expect: { status: 201 } }

describe('sandbox run: the steps after a failed one', () => {
  it('says how many later steps were not run, on the terminal and in the JSON report', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'early.json'), scenario([config, WRONG, config, { ...config, name: 'last' }]))
    await writeFile(join(dir, 'last.json'), scenario([config, WRONG]))
    const [human, json] = await Promise.all([
      runCli(['run', '--dir', '.', 'early', 'last'], { cwd: dir }),
      runCli(['run', '--dir', '.', 'early', 'last', '--json'], { cwd: dir }),
    ])
    expect(human.code).toBe(1)
    expect(human.stdout).toMatch(/^ {2}✗ GET {5}\/api\/sandbox\/config 200 \d+ms {2}wrong status$/m)
    expect(human.stdout).toContain('\n  - 2 later steps not run: a scenario stops at its first failed step\nlast — ')
    // A scenario that failed at its last step has none to name.
    expect(human.stdout).not.toMatch(/later steps? not run[^]*later steps? not run/)
    expect(json.code).toBe(1)
    const [early, last] = JSON.parse(json.stdout).scenarios
    expect([early.steps.length, early.steps_not_run]).toEqual([2, 2])
    expect([last.steps.length, last.steps_not_run]).toEqual([2, undefined])
  })
})
