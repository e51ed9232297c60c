import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-force-color')
const ESCAPE = '\u001b'

// CI systems whose logs show colours set FORCE_COLOR, and the CLI honours it through a pipe (the
// report of `sandbox run` is then coloured: test/e2e/tty-prompts.test.ts). Output that another
// program reads must stay plain all the same.
describe('under FORCE_COLOR, output meant for other programs carries no colour', () => {
  it('completion scripts, webhook sign\'s headers, the key keys create prints, the OpenAPI document', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const env = { FORCE_COLOR: '3', NO_COLOR: '' }
    const keys = join(await tempDir(), 'keys.json')
    const runs = {
      bash: runCli(['completion', 'bash'], { env }),
      zsh: runCli(['completion', 'zsh'], { env }),
      fish: runCli(['completion', 'fish'], { env }),
      sign: runCli(['webhook', 'sign', '--secret', 'whsec_force_color_0001'], { env, input: '{"id":"evt_1","type":"sandbox.webhook.test","data":{"object":{}}}' }),
      key: runCli(['keys', 'create', '--keys', keys, '--label', 'ci'], { env }),
      openapi: runCli(['openapi'], { env }),
    }
    for (const [name, run] of Object.entries(runs)) {
      const { code, stdout } = await run
      expect([name, code]).toEqual([name, 0])
      expect(stdout.length, name).toBeGreaterThan(0)
      expect(stdout.includes(ESCAPE), name).toBe(false)
    }
    expect((await runs.key).stdout).toMatch(/^sk_sandbox_\w+\n/)
    expect((await runs.sign).stdout).toMatch(/^content-type: application\/json\n/)
    // The same run's human table is coloured: FORCE_COLOR did reach the process.
    const list = await runCli(['keys', 'list', '--keys', keys], { env })
    expect(list.stdout).toContain(ESCAPE)
  })
})
