import { readdirSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
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

  it('a host or port set in the environment that serve cannot listen on is named by its variable', async () => {
    const cwd = await tempDir()
    const advice = 'give an address of this machine, e.g. 127.0.0.1, or 0.0.0.0 for every interface'
    const foreign = await runCli(['serve', '--storage', 'memory', '--port', '0'], { cwd, env: { SANDBOX_HOST: '192.0.2.1' } })
    expect([foreign.code, foreign.stderr]).toEqual([2, `sandbox: cannot listen on SANDBOX_HOST 192.0.2.1 (EADDRNOTAVAIL): ${advice}\n`])
    // A blank host is shown quoted: unquoted, the message read "on --host   (ENOTFOUND)".
    const blank = await runCli(['serve', '--storage', 'memory', '--port', '0'], { cwd, env: { SANDBOX_HOST: ' ' } })
    expect([blank.code, blank.stderr]).toEqual([2, `sandbox: cannot listen on SANDBOX_HOST " " (ENOTFOUND): ${advice}\n`])
    const busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    const port = (busy.address() as AddressInfo).port
    try {
      const taken = await runCli(['serve', '--storage', 'memory'], { cwd, env: { SANDBOX_PORT: String(port) } })
      expect([taken.code, taken.stderr]).toEqual([2, `sandbox: port ${port} on 127.0.0.1 is already in use; pick another with SANDBOX_PORT (0 = any free port)\n`])
    } finally {
      await new Promise((resolve) => busy.close(resolve))
    }
    // Given as a flag, the host is named by the flag, as before.
    const flag = await runCli(['serve', '--storage', 'memory', '--port', '0', '--host', '192.0.2.1'], { cwd, env: { SANDBOX_HOST: '127.0.0.1' } })
    expect([flag.code, flag.stderr]).toEqual([2, `sandbox: cannot listen on --host 192.0.2.1 (EADDRNOTAVAIL): ${advice}\n`])
  }, MANY_RUNS_TIMEOUT_MS)

  it('keys create names --expires-in in a bad or out-of-range duration, as the other duration flags are named', async () => {
    const cwd = await tempDir()
    const negative = await runCli(['keys', 'create', '--keys', 'k.json', '--expires-in', '-1d'], { cwd })
    expect([negative.code, negative.stderr]).toEqual([2, 'sandbox: --expires-in: invalid duration "-1d": expected a number and ms, s, m, h, d or w (e.g. 500ms, 1.5s, 30s, 10m or 30d)\n'])
    const long = await runCli(['keys', 'create', '--keys', 'k.json', '--expires-in', '3651d'], { cwd })
    expect([long.code, long.stderr]).toEqual([2, 'sandbox: --expires-in: duration "3651d" is out of range: from 1ms to 3650d\n'])
  }, MANY_RUNS_TIMEOUT_MS)

  it('refuses "-" as a file, which would have made a file named "-", and says what to give instead', async () => {
    const cwd = await tempDir()
    const tail = '"-" is no file, and standard input and output are not used for files;'
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['openapi', '--output', '-'], {}, `--output -: ${tail} leave out --output to print to stdout (./- for one named "-")`],
      [['run', 'loan-flow', '--junit', '-'], {}, `--junit -: ${tail} give a file path (./- for one named "-")`],
      [['keys', 'create', '--keys', '-'], {}, `--keys -: ${tail} give a file path (./- for one named "-")`],
      [['keys', 'create'], { SANDBOX_KEYS_FILE: '-' }, `SANDBOX_KEYS_FILE -: ${tail} give a file path (./- for one named "-")`],
      [['logs', '--data-dir', '-'], {}, `--data-dir -: ${tail} give a directory path (./- for one named "-")`],
      [['logs'], { SANDBOX_DATA_DIR: '-' }, `SANDBOX_DATA_DIR -: ${tail} give a directory path (./- for one named "-")`],
    ]
    for (const [args, env, message] of cases) {
      const result = await runCli(args, { cwd, env })
      expect([result.code, result.stdout, result.stderr], args.join(' ')).toEqual([2, '', `sandbox: ${message}\n`])
    }
    expect(readdirSync(cwd)).toEqual([])
    // A file of that name is still reachable as ./-.
    const named = await runCli(['openapi', '--output', './-'], { cwd })
    expect([named.code, readdirSync(cwd)]).toEqual([0, ['-']])
  }, MANY_RUNS_TIMEOUT_MS)
})
