import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest'
import { select } from '@inquirer/prompts'
import { runCli } from '../../src/cli/main.js'
import { createKeyRecord, readKeysFile } from '../../src/keys/keys-file.js'
import { writeKeysFile } from '../../src/keys/write-keys-file.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// The prompt is the only thing faked: the rest of each command runs for real, in-process.
vi.mock('@inquirer/prompts', () => ({ select: vi.fn() }))

const tempDir = useTempDirs('sandbox-cli-run')

class ExitCalled extends Error {
  constructor(readonly code: number) {
    super(`process.exit(${code})`)
  }
}

let stdout = ''
let stderr = ''

beforeEach(() => {
  stdout = ''
  stderr = ''
  vi.stubEnv('NO_COLOR', '1')
  vi.stubEnv('SANDBOX_KEYS_FILE', undefined)
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => { stdout += String(chunk); return true })
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => { stderr += String(chunk); return true })
  vi.spyOn(process, 'exit').mockImplementation((code) => { throw new ExitCalled(Number(code ?? 0)) })
})

afterEach(() => {
  vi.restoreAllMocks()
  vi.unstubAllEnvs()
})

/** Runs `sandbox ARGS` in-process; resolves with the exit code (0 when the command returned). */
async function run(...args: string[]): Promise<number> {
  try {
    await runCli(['node', 'sandbox', ...args])
    return 0
  } catch (error) {
    if (error instanceof ExitCalled) return error.code
    throw error
  }
}

/**
 * Sets isTTY on stdin and stdout for one test, as on an interactive terminal, outside CI: a CI
 * runner sets `CI`, under which the CLI never prompts.
 */
function pretendTerminal(): void {
  vi.stubEnv('CI', undefined)
  for (const stream of [process.stdin, process.stdout] as Array<{ isTTY?: boolean }>) {
    const before = stream.isTTY
    stream.isTTY = true
    onTestFinished(() => { stream.isTTY = before })
  }
}

describe('sandbox logs', () => {
  it('says on stderr that the log holds no request, naming the data dir read, rather than printing nothing', async () => {
    const dir = await tempDir()
    expect(await run('logs', '--data-dir', dir)).toBe(0)
    expect([stdout, stderr]).toEqual(['', `no request in the request log of ${dir} (sandbox serve --data-dir ${dir} logs each request it answers)\n`])
    stderr = ''
    expect(await run('logs', '--data-dir', dir, '--key', 'sk_sandbox_abcdefghijklmnop')).toBe(0)
    expect([stdout, stderr]).toEqual(['', `no request of that key in the request log of ${dir}\n`])
    // --json output stays empty, and --tail 0 asks for none.
    stderr = ''
    expect(await run('logs', '--data-dir', dir, '--json')).toBe(0)
    expect(await run('logs', '--data-dir', dir, '--tail', '0')).toBe(0)
    expect([stdout, stderr]).toEqual(['', ''])
  })
})

/** Runs `sandbox ARGS` and expects exit 2 with commander's parse error MESSAGE and its usage hint, alone on stderr. */
async function expectParseError(args: readonly string[], message: string): Promise<void> {
  stderr = ''
  expect(await run(...args), args.join(' ')).toBe(2)
  expect(stderr, args.join(' ')).toBe(`sandbox: ${message}\n(run with --help for usage)\n`)
}

describe('usage errors', () => {
  it('exit 2 for unknown commands, unknown flags and missing flag values', async () => {
    expect(await run('nope')).toBe(2)
    expect(stderr).toContain("sandbox: unknown command 'nope'")
    expect(await run('keys', 'list', '--bogus')).toBe(2)
    expect(stderr).toContain("sandbox: unknown option '--bogus'")
    expect(await run('keys', 'create', '--label')).toBe(2)
    expect(stderr).toContain('sandbox: --label needs a value\n')
  })

  it('`help` naming an unknown command names it and exits 2; naming a known one prints its help', async () => {
    expect(await run('help', 'serv')).toBe(2)
    expect(stderr).toContain("sandbox: unknown command 'serv' (did you mean serve?)")
    stderr = ''
    expect(await run('help', 'webhook', 'nope')).toBe(2)
    expect(stderr).toContain("sandbox: unknown command 'nope'")
    stderr = ''
    expect(await run('webhook', 'help', 'nope')).toBe(2)
    expect(stderr).toContain("sandbox: unknown command 'nope'")
    expect(await run('help', 'webhook', 'verify')).toBe(0)
    expect(stdout).toContain('Usage: sandbox webhook verify [options] <receiver-url>')
  })

  it('an option that names one of the command\'s arguments says to give it as the argument, not a look-alike option', async () => {
    // Commander suggested --keys (the keys file) for --key, and --help for --shell.
    for (const [args, message] of [
      [['keys', 'revoke', '--key', 'sk_sandbox_abcdefghijklmnop'], "unknown option '--key': give the key as an argument, with no option before it (sandbox keys revoke [options] [key])"],
      [['completion', '--shell', 'bash'], "unknown option '--shell': give the shell as an argument, with no option before it (sandbox completion [options] [shell])"],
      [['webhook', 'verify', '--url', 'http://127.0.0.1:3000/webhooks'], "unknown option '--url': give the receiver-url as an argument, with no option before it (sandbox webhook verify [options] <receiver-url>)"],
      [['webhook', 'trigger', '--event', 'loan.issued'], "unknown option '--event': give the event as an argument, with no option before it (sandbox webhook trigger [options] [event])"],
      [['run', '--scenarios', 'loan-flow'], "unknown option '--scenarios': give the scenario as an argument, with no option before it (sandbox run [options] [scenario...])"],
    ] as const) await expectParseError(args, message)
    stderr = ''
    expect(await run('keys', 'reset', '--key=sk_sandbox_abcdefghijklmnop')).toBe(2)
    expect(stderr).toContain("unknown option '--key=sk_sandbox_abcdefghijklmnop': give the key as an argument")
    // A misspelt option still gets commander's suggestion.
    stderr = ''
    expect(await run('keys', 'revoke', '--kyes', 'k.json')).toBe(2)
    expect(stderr).toContain("unknown option '--kyes' (did you mean --keys?)")
  })

  it('an argument a command does not take is named, with the option it likely belongs to', async () => {
    // Commander said only "too many arguments for 'serve'. Expected 0 arguments but got 1."
    for (const [args, message] of [
      [['serve', '4010'], "too many arguments for 'serve': \"4010\" (did you mean --port 4010?)"],
      [['webhook', 'listen', '4242'], "too many arguments for 'listen': \"4242\" (did you mean --port 4242?)"],
      [['logs', '--follow', '10'], "too many arguments for 'logs': \"10\" (did you mean --tail 10?)"],
      [['openapi', 'openapi.json'], "too many arguments for 'openapi': \"openapi.json\" (did you mean --output openapi.json?)"],
      [['keys', 'list', 'k.json'], "too many arguments for 'list': \"k.json\" (did you mean --keys k.json?)"],
      [['webhook', 'deliveries', 'http://127.0.0.1:4010'], "too many arguments for 'deliveries': \"http://127.0.0.1:4010\" (did you mean --base-url http://127.0.0.1:4010?)"],
      [['webhook', 'sign', 'event.json'], "too many arguments for 'sign': \"event.json\" (the body is read from standard input: sandbox webhook sign [options] < event.json)"],
      [['webhook', 'verify', 'http://127.0.0.1:3000/a', 'http://127.0.0.1:3000/b'], "too many arguments for 'verify': \"http://127.0.0.1:3000/b\" (sandbox webhook verify [options] <receiver-url>)"],
    ] as const) await expectParseError(args, message)
  })

  it('a server URL given to run as a scenario says it goes in --base-url', async () => {
    // It was "unknown scenario http://127.0.0.1:4010; known: ..." with every id.
    expect(await run('run', 'http://127.0.0.1:4010')).toBe(2)
    expect(stderr).toBe('sandbox: http://127.0.0.1:4010 is a URL, not a scenario: give the server to test with --base-url (sandbox run --base-url http://127.0.0.1:4010)\n')
  })

  it('a comma list given to a repeatable option says to repeat it, as --events would take the list', async () => {
    expect(await run('webhook', 'deliveries', '--status', 'failed,retrying')).toBe(2)
    expect(stderr).toBe('sandbox: --status: invalid value "failed,retrying": expected one state per --status: --status failed --status retrying\n(run with --help for usage)\n')
    stderr = ''
    expect(await run('run', '--list', '--tag', 'smoke,webhooks')).toBe(2)
    expect(stderr).toBe('sandbox: no scenario has the tag smoke,webhooks: give one tag per --tag: --tag smoke --tag webhooks\n')
  })

  it('webhook listen --help says --json makes every line JSON, the ready and stopped lines included', async () => {
    // It said "one JSON object per delivery": a script reading deliveries met the ready line first.
    expect(await run('webhook', 'listen', '--help')).toBe(0)
    expect(stdout.replace(/\s+/g, ' ')).toContain('--json every line a JSON object: one per delivery, and the ready and stopped lines ("event": "ready", "stopped")')
  })

  it('an option of another command names the commands that take it', async () => {
    // It was "unknown option '--port'" alone.
    expect(await run('run', '--port', '0')).toBe(2)
    expect(stderr).toBe("sandbox: unknown option '--port': an option of sandbox serve and sandbox webhook listen, not of sandbox run\n(run with --help for usage)\n")
    stderr = ''
    expect(await run('webhook', 'listen', '--base-url', 'http://127.0.0.1:4010')).toBe(2)
    expect(stderr).toContain("sandbox: unknown option '--base-url': an option of sandbox run, sandbox webhook trigger, ")
    stderr = ''
    expect(await run('--port', '0', 'serve')).toBe(2)
    expect(stderr).toBe("sandbox: unknown option '--port': an option of sandbox serve and sandbox webhook listen, given after the command's name\n(run with --help for usage)\n")
    stderr = ''
    expect(await run('keys', '--keys', 'k.json', 'list')).toBe(2)
    expect(stderr).toBe("sandbox: unknown option '--keys': an option of sandbox serve, sandbox logs, sandbox keys create, sandbox keys list, sandbox keys revoke and sandbox keys reset, given after the command's name\n(run with --help for usage)\n")
    // Written with = as well.
    stderr = ''
    expect(await run('run', '--port=0')).toBe(2)
    expect(stderr).toBe("sandbox: unknown option '--port=0': an option of sandbox serve and sandbox webhook listen, not of sandbox run\n(run with --help for usage)\n")
    // An option no command has is told as before.
    stderr = ''
    expect(await run('run', '--no-such-flag')).toBe(2)
    expect(stderr).toBe("sandbox: unknown option '--no-such-flag'\n(run with --help for usage)\n")
  })

  it('run --help gives --timeout\'s limit as the API commands do, and keys revoke|reset --help say KEY is asked for on a terminal', async () => {
    const helpOf = async (...args: string[]) => {
      stdout = ''
      expect(await run(...args, '--help')).toBe(0)
      return stdout.replace(/\s+/g, ' ')
    }
    const timeout = 'give up on an attempt of a request after DURATION, then retry (4 attempts in all; default 10s, at most 1h)'
    expect(await helpOf('webhook', 'trigger')).toContain(timeout)
    expect(await helpOf('run')).toContain(timeout)
    for (const command of ['revoke', 'reset']) expect(await helpOf('keys', command)).toContain('key the key, a unique prefix of it, or its masked form (asked for on a terminal)')
  })

  it('exit 2 before serving anything for a bad --port, --rate-limit or --storage', async () => {
    for (const [flag, value, message] of [
      ['--port', '70000', 'invalid --port "70000"'],
      ['--rate-limit', '5', '--rate-limit:'],
      ['--storage', 'tape', 'unknown storage "tape"'],
    ] as const) {
      stderr = ''
      expect(await run('serve', flag, value), flag).toBe(2)
      expect(stderr, flag).toMatch(new RegExp(`^sandbox: .*${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
      expect(stderr, flag).not.toContain('    at ')
    }
  })

  it('a --storage that is not taken is echoed without the password it may hold', async () => {
    for (const value of ['valkey://:hunter2@127.0.0.1:6379/0', 'redis:/:hunter2@127.0.0.1:6379/0', 'redis//user:hunter2@127.0.0.1:6379']) {
      stderr = ''
      expect(await run('serve', '--storage', value), value).toBe(2)
      expect(stderr, value).toContain('unknown storage "')
      expect(stderr, value).toContain('***@127.0.0.1')
      expect(stderr, value).not.toContain('hunter2')
    }
  })

  it('exit 0 for --help and --version', async () => {
    expect(await run('--help')).toBe(0)
    for (const command of ['serve', 'logs', 'keys']) expect(stdout).toContain(command)
    stdout = ''
    expect(await run('--version')).toBe(0)
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  })
})

describe('keys commands', () => {
  it('turn a malformed keys file into exit 2 with the file named and no stack', async () => {
    const path = join(await tempDir(), 'keys.json')
    await writeFile(path, '{"keys": [')
    for (const args of [['keys', 'list'], ['keys', 'create'], ['keys', 'revoke', 'sk_sandbox_abc'], ['keys', 'reset', 'sk_sandbox_abc', '--storage', 'memory']]) {
      stderr = ''
      expect(await run(...args, '--keys', path), args.join(' ')).toBe(2)
      expect(stderr, args.join(' ')).toBe(`sandbox: keys file ${path}: not valid JSON (line 1, column 11): Unexpected end of JSON input\n`)
      expect(stderr).not.toContain('    at ')
    }
  })

  it('read the keys file from SANDBOX_KEYS_FILE when --keys is absent', async () => {
    const path = join(await tempDir(), 'env-keys.json')
    vi.stubEnv('SANDBOX_KEYS_FILE', path)
    expect(await run('keys', 'create', '--label', 'from-env')).toBe(0)
    const file = await readKeysFile(path)
    expect(file.keys.map((record) => record.label)).toEqual(['from-env'])
    expect(stdout.trim()).toBe(file.keys[0]!.key)
  })

  it('refuse an ambiguous prefix with exit 2', async () => {
    const path = join(await tempDir(), 'keys.json')
    const base = createKeyRecord({ now: new Date() })
    await writeKeysFile(path, { version: 1, keys: [{ ...base, key: 'sk_sandbox_SameStart0000000000000000000001' }, { ...base, key: 'sk_sandbox_SameStart0000000000000000000002' }] })
    expect(await run('keys', 'revoke', 'sk_sandbox_SameStart', '--keys', path)).toBe(2)
    expect(stderr).toContain('matches 2 keys')
    expect((await readKeysFile(path)).keys.every((record) => record.revoked_at === null)).toBe(true)
  })

  it('ask which key to revoke on a terminal when KEY is missing', async () => {
    const path = join(await tempDir(), 'keys.json')
    const records = [createKeyRecord({ label: 'one', now: new Date() }), createKeyRecord({ label: 'two', now: new Date() })]
    await writeKeysFile(path, { version: 1, keys: records })
    pretendTerminal()
    vi.mocked(select).mockResolvedValueOnce(records[1]!.key)
    expect(await run('keys', 'revoke', '--keys', path)).toBe(0)
    const choices = vi.mocked(select).mock.calls[0]![0].choices as Array<{ name: string }>
    expect(choices.map((choice) => choice.name)).toEqual([expect.stringContaining('one'), expect.stringContaining('two')])
    const file = await readKeysFile(path)
    expect(file.keys.map((record) => record.revoked_at !== null)).toEqual([false, true])
  })

  it('exit 130 without a stack when the prompt is cancelled with Ctrl+C', async () => {
    const path = join(await tempDir(), 'keys.json')
    await writeKeysFile(path, { version: 1, keys: [createKeyRecord({ now: new Date() })] })
    pretendTerminal()
    vi.mocked(select).mockRejectedValueOnce(Object.assign(new Error('User force closed the prompt with SIGINT'), { name: 'ExitPromptError' }))
    expect(await run('keys', 'reset', '--keys', path, '--storage', 'memory')).toBe(130)
    expect(stderr).not.toContain('    at ')
    expect((await readKeysFile(path)).keys[0]!.revoked_at).toBeNull()
  })
})
