import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())

const tempDir = useTempDirs('sandbox-run-arguments')

describe('sandbox run --dir of a directory without scenario files', () => {
  it('says the directory holds none, not just that there is nothing to run', async () => {
    const cwd = await tempDir()
    await mkdir(join(cwd, 'sc'))
    await writeFile(join(cwd, 'sc', 'notes.txt'), '{}')
    const result = await runCli(['run', '--dir', 'sc', '--json'], { cwd })
    expect([result.code, result.stderr]).toEqual([2, 'sandbox: no scenario files (*.json) in --dir sc\n'])
    expect(JSON.parse(result.stdout)).toEqual({ error: { code: 'USAGE', message: 'no scenario files (*.json) in --dir sc' } })
  })
})

describe('sandbox run with a path that is no scenario file', () => {
  it('says a directory is one and to give it as --dir, and what a path of another kind must be', async () => {
    const cwd = await tempDir()
    await mkdir(join(cwd, 'sc'))
    await writeFile(join(cwd, 'notes.txt'), '{}')
    execFileSync('mkfifo', [join(cwd, 'pipe')])
    for (const dir of ['./sc', 'sc/']) {
      const result = await runCli(['run', dir], { cwd })
      expect([result.code, result.stdout, result.stderr], dir).toEqual([2, '', `sandbox: ${dir} is a directory: to run the scenarios in it, give --dir ${dir}\n`])
    }
    // `run <(cat x.json)` names a pipe such as /dev/fd/63; a FIFO stands in for it here.
    for (const file of ['notes.txt', join(cwd, 'pipe')]) {
      const result = await runCli(['run', file], { cwd })
      expect([result.code, result.stderr], file).toEqual([2, `sandbox: ${file} is not a scenario file: give a path ending in .json (a pipe or a file of another name is not read), a scenario id, or --dir for a directory of scenarios\n`])
    }
    // A name that is nothing here is still an unknown id, with the closest one.
    const unknown = await runCli(['run', 'loan-flwo'], { cwd })
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringMatching(/^sandbox: unknown scenario loan-flwo \(did you mean loan-flow\?\); known: /)])
  }, MANY_RUNS_TIMEOUT_MS)
})

describe('sandbox run ID of a scenario of your own, without --dir', () => {
  it('says the ids known are the shipped ones, and how to give yours: its path, or --dir', async () => {
    // "A scenario is scenarios/<id>.json": a project that made one there and ran it by id was told
    // only the shipped ids, as if its file had not been written.
    const cwd = await tempDir()
    await mkdir(join(cwd, 'scenarios'))
    await writeFile(join(cwd, 'scenarios', 'mine.json'), JSON.stringify({ name: 'Mine', description: 'mine', steps: [{ request: { method: 'GET', path: '/api/sandbox/config' } }] }))
    const found = await runCli(['run', 'mine'], { cwd })
    expect([found.code, found.stderr]).toEqual([2, expect.stringMatching(/^sandbox: unknown scenario mine; known: direct-actions, .*, webhook-test-event \(the shipped scenarios; yours: scenarios\/mine\.json is here, run it as sandbox run scenarios\/mine\.json or give --dir scenarios\)\n$/)])
    const notFound = await runCli(['run', 'other'], { cwd })
    expect([notFound.code, notFound.stderr]).toEqual([2, expect.stringMatching(/^sandbox: unknown scenario other; known: .* \(the shipped scenarios; yours: give a scenario file's path, or --dir for the directory that holds it\)\n$/)])
    // With --dir, the ids known are that directory's: nothing to add.
    const inDir = await runCli(['run', 'other', '--dir', 'scenarios'], { cwd })
    expect([inDir.code, inDir.stderr]).toEqual([2, 'sandbox: unknown scenario other; known: mine\n'])
  }, MANY_RUNS_TIMEOUT_MS)
})
