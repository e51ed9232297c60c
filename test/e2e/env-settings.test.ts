import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, runCli, startNodeProcess } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())

const tempDir = useTempDirs('sandbox-env')

/**
 * What a CI job or a compose file sets when the value it stands for is not defined
 * (`SANDBOX_HOST: ${{ vars.SANDBOX_HOST }}`): each of these variables, empty.
 */
const EMPTY = {
  SANDBOX_PORT: '',
  SANDBOX_HOST: '',
  SANDBOX_STORAGE: '',
  SANDBOX_DATA_DIR: '',
  SANDBOX_KEYS_FILE: '',
  SANDBOX_RATE_LIMIT: '',
  SANDBOX_FAULTS: '',
  SANDBOX_TLS_CERT: '',
  SANDBOX_TLS_KEY: '',
  SANDBOX_WEBHOOK_FORWARD_SECRET: '',
}

describe('SANDBOX_* variables', () => {
  it('an empty one counts as unset: serve listens on 127.0.0.1 and keeps its files in .sandbox', async () => {
    const cwd = await tempDir()
    // --port 0: an empty SANDBOX_PORT would otherwise mean the default 4010, which may be taken here.
    const serve = await startNodeProcess([BIN, 'serve', '--port', '0'], /sandbox ready: (\S+)/, { cwd, env: EMPTY })
    // "" as the host listened on every interface (the line read http://:PORT); as the data dir,
    // the server's files went into the current directory.
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(serve.output()).toMatch(/\(storage fs \.sandbox, keys open, rate limit 120\/60s\)/)
    const answer = await fetch(`${serve.url}/api/sandbox/config`, { headers: { authorization: 'Bearer sk_sandbox_env_empty_0123456789' } })
    expect(answer.status).toBe(200)
    expect(await serve.stop()).toBe(0)
    expect(readdirSync(cwd)).toEqual(['.sandbox'])
    // The keys file too: "" was a file name that could not be written.
    const created = await runCli(['keys', 'create', '--label', 'ci'], { cwd, env: EMPTY })
    expect(created.code, created.stderr).toBe(0)
    expect(existsSync(join(cwd, '.sandbox', 'keys.json'))).toBe(true)
    expect(readdirSync(cwd)).toEqual(['.sandbox'])
  })

  it('serve takes its keys file from SANDBOX_KEYS_FILE, ~ expanded, and accepts only the keys in it', async () => {
    const home = await tempDir()
    const created = await runCli(['keys', 'create', '--json', '--label', 'ci'], { cwd: home, env: { HOME: home, SANDBOX_KEYS_FILE: '~/ci-keys.json' } })
    expect(created.code, created.stderr).toBe(0)
    const key = (JSON.parse(created.stdout) as { key: string }).key
    const serve = await startNodeProcess([BIN, 'serve', '--port', '0', '--storage', 'memory'], /sandbox ready: (\S+)/, { cwd: home, env: { HOME: home, SANDBOX_KEYS_FILE: '~/ci-keys.json' } })
    expect(serve.output()).toContain(`keys ${join(home, 'ci-keys.json')}`)
    const ask = (apiKey: string) => fetch(`${serve.url}/api/sandbox/config`, { headers: { authorization: `Bearer ${apiKey}` } })
    expect((await ask(key)).status).toBe(200)
    expect((await ask('sk_sandbox_not_registered_0123456789')).status).toBe(401)
    expect(await serve.stop()).toBe(0)
  })

  it('a bad value is named by its variable, which is on no command line to look for', async () => {
    const cwd = await tempDir()
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['serve'], { SANDBOX_PORT: 'abc' }, 'invalid SANDBOX_PORT "abc": expected a port from 0 to 65535 (0 = any free port)'],
      [['serve', '--port', '0'], { SANDBOX_RATE_LIMIT: 'fast' }, 'SANDBOX_RATE_LIMIT: invalid rate limit "fast": expected N/SECONDS such as 120/60, or off'],
      [['serve', '--port', '0'], { SANDBOX_STORAGE: 'memroy' }, 'SANDBOX_STORAGE: unknown storage "memroy" (did you mean memory?): use fs, memory or a redis:// URL'],
      [['logs'], { SANDBOX_STORAGE: 'tape' }, 'SANDBOX_STORAGE: unknown storage "tape": use fs, memory or a redis:// URL'],
      [['serve', '--port', '0'], { SANDBOX_TLS_CERT: join(cwd, 'cert.pem'), SANDBOX_TLS_KEY: join(cwd, 'key.pem') }, `cannot read SANDBOX_TLS_CERT ${join(cwd, 'cert.pem')}: no such file`],
      [['serve', '--port', '0'], { SANDBOX_TLS_KEY: join(cwd, 'key.pem') }, 'SANDBOX_TLS_KEY is set, and https needs both files: give --tls-cert or SANDBOX_TLS_CERT too, or unset SANDBOX_TLS_KEY for plain http'],
      [['run', 'loan-flow'], { SANDBOX_BASE_URL: '127.0.0.1:4010' }, 'SANDBOX_BASE_URL must be an http(s) URL, got "127.0.0.1:4010"'],
    ]
    for (const [args, env, message] of cases) {
      const result = await runCli(args, { cwd, env })
      expect([result.code, result.stderr], JSON.stringify(env)).toEqual([2, `sandbox: ${message}\n`])
    }
    // Given as flags, the same values are named by their flags.
    const flag = await runCli(['serve', '--port', 'abc'], { cwd })
    expect([flag.code, flag.stderr]).toEqual([2, 'sandbox: invalid --port "abc": expected a port from 0 to 65535 (0 = any free port)\n'])
    const flagStorage = await runCli(['serve', '--port', '0', '--storage', 'tape'], { cwd, env: { SANDBOX_STORAGE: 'memory' } })
    expect([flagStorage.code, flagStorage.stderr]).toEqual([2, 'sandbox: unknown storage "tape": use fs, memory or a redis:// URL\n'])
    expect(readdirSync(cwd)).toEqual([])
  })
})
