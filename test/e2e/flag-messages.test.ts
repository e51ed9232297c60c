import { afterEach, describe, expect, it } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// README: "A bad value is named by where it came from" (the flag or the environment variable),
// shown as typed, with what is accepted.

afterEach(() => killAll())

const tempDir = useTempDirs('sandbox-flag-messages')

describe('a bad value is named by its flag or variable', () => {
  it('a rate limit past 2^53 is refused as typed, naming --rate-limit or SANDBOX_RATE_LIMIT', async () => {
    const cwd = await tempDir()
    const range = 'N and SECONDS are whole numbers from 1 to 9007199254740991, such as 120/60'
    const flag = await runCli(['serve', '--storage', 'memory', '--port', '0', '--rate-limit', '99999999999999999999/1'], { cwd })
    expect([flag.code, flag.stderr]).toEqual([2, `sandbox: --rate-limit: invalid rate limit "99999999999999999999/1": ${range}\n`])
    // Rounded to 9007199254740992 by Number(): the message still shows what was typed.
    const env = await runCli(['serve', '--storage', 'memory', '--port', '0'], { cwd, env: { SANDBOX_RATE_LIMIT: '9007199254740993/60' } })
    expect([env.code, env.stderr]).toEqual([2, `sandbox: SANDBOX_RATE_LIMIT: invalid rate limit "9007199254740993/60": ${range}\n`])
  }, MANY_RUNS_TIMEOUT_MS)
})
