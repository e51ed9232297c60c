import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { addKey } from '../../src/keys/manage-keys.js'
import { killAll, runCli, startServe, type ServeProcess } from '../helpers/cli.js'
import { COLOUR, KEY, PTY_UNAVAILABLE, killPtys, leavesCursorHidden, runInPty, type PtySession } from '../helpers/pty.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/**
 * The design rule, through a real terminal: prompts only on a TTY when the value is missing, every
 * prompt has a flag or argument instead, Ctrl+C at a prompt exits 130 cleanly. The unit tests fake
 * the prompt; these run the built CLI in a pseudo-terminal (see test/helpers/pty.ts) and type.
 */

// CI sets SANDBOX_TEST_PTY=required: there a missing `script` must fail the run, not skip.
if (PTY_UNAVAILABLE && process.env.SANDBOX_TEST_PTY === 'required') throw new Error(`SANDBOX_TEST_PTY=required but ${PTY_UNAVAILABLE}`)

const tempDir = useTempDirs('sandbox-tty')
afterEach(() => {
  killPtys()
})
afterAll(() => killAll())

/** Two one-request scenarios: a run of them takes milliseconds, so a test can run them often. */
const TINY = {
  'tiny-a': { name: 'Tiny A', description: 'reads the config', tags: ['tiny'], steps: [{ name: 'config', request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status: 200 } }] },
  'tiny-b': { name: 'Tiny B', description: 'reads the config too', tags: ['tiny'], steps: [{ name: 'config', request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status: 200 } }] },
}

/** A stack frame as Node prints one: Ctrl+C must never show one. */
const STACK_FRAME = /^\s+at .+:\d+:\d+\)?$/m

/** Ctrl+C at a shown prompt: what a clean exit looks like on the terminal. */
async function expectCleanCtrlC(pty: PtySession): Promise<void> {
  pty.write(KEY.ctrlC)
  expect(await pty.exited()).toBe(130)
  // No `^C` echo: the prompt read the key in raw mode and the CLI chose 130, rather than the
  // terminal turning it into a SIGINT that killed node (which script also reports as 130).
  expect(pty.text()).not.toContain('^C')
  expectCleanExit(pty, 'Ctrl+C')
}

/** After a prompt was closed by Ctrl+C or a signal: no stack, no error line, the cursor visible. */
function expectCleanExit(pty: PtySession, how: string): void {
  expect(pty.text(), how).not.toMatch(STACK_FRAME)
  expect(pty.text(), how).not.toMatch(/PromptError|unexpected error|sandbox: /)
  expect(leavesCursorHidden(pty.raw()), `${how} leaves the cursor hidden`).toBe(false)
}

describe.skipIf(PTY_UNAVAILABLE !== '')(`on a terminal${PTY_UNAVAILABLE ? ` (skipped: ${PTY_UNAVAILABLE})` : ''}`, () => {
  let serve: ServeProcess
  let tinyDir: string
  beforeAll(async () => {
    serve = await startServe(['--port', '0', '--host', '127.0.0.1', '--storage', 'memory'])
    tinyDir = await tempDir()
    for (const [id, scenario] of Object.entries(TINY)) await writeFile(join(tinyDir, `${id}.json`), JSON.stringify(scenario))
  })
  afterAll(async () => {
    await serve?.stop()
  })

  describe('sandbox run without a scenario', () => {
    it('asks which scenarios to run (all checked), and runs the ones picked with arrows and space', async () => {
      const pty = runInPty(['run', '--base-url', serve.url])
      await pty.waitFor('Which scenarios to run? (space toggles, a toggles all, enter runs)')
      await pty.waitFor(/❯◉ direct-actions .*\n ◉ direct-loan /)
      await pty.press('a', /❯◯ direct-actions .*\n ◯ direct-loan /) // all off
      // At least one: enter with none checked says so and keeps asking.
      await pty.press(KEY.enter, 'At least one choice must be selected')
      await pty.press(KEY.down, '❯◯ direct-loan')
      await pty.press(KEY.space, '❯◉ direct-loan')
      await pty.press(KEY.down.repeat(4), '❯◯ loan-flow')
      await pty.press(KEY.space, '❯◉ loan-flow')
      const picked = pty.mark()
      pty.write(KEY.enter)
      expect(await pty.exited()).toBe(0)
      const run = pty.text(picked)
      expect(run).toMatch(/^direct-loan — Direct loan creation$/m)
      expect(run).toMatch(/^loan-flow — Loan issuance through the 4-step flow$/m)
      expect(run).not.toMatch(/^(direct-actions|repay-full) — /m)
      expect(run).toContain(`against ${serve.url}`)
      expect(run).toMatch(/^2 passed, 0 failed$/m)
      expect(leavesCursorHidden(pty.raw())).toBe(false)
    })

    it('Ctrl+C at the prompt exits 130: no stack, cursor shown again, nothing run', async () => {
      const pty = runInPty(['run', '--base-url', serve.url])
      await pty.waitFor('Which scenarios to run?')
      await expectCleanCtrlC(pty)
      expect(pty.text()).not.toMatch(/passed|failed/)
    })

    it('SIGINT, SIGTERM or SIGHUP sent to it at the prompt (kill, timeout) exits 130, 143 or 129 with the cursor shown again', async () => {
      // Started together (as in the tests below): each is a node start-up, and they do not interact.
      const runs = ([['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const).map(([signal, code]) => [signal, code, runInPty(['run', '--dir', tinyDir])] as const)
      for (const [signal, code, pty] of runs) {
        await pty.waitFor('Which scenarios to run?')
        pty.signal(signal)
        expect(await pty.exited(), signal).toBe(code)
        expectCleanExit(pty, signal)
        expect(pty.text(), signal).not.toMatch(/passed|failed/)
      }
    })

    it('does not ask when the scenarios are named, tagged or --json (the prompt\'s flags)', async () => {
      const runs = [['tiny-b'], ['--tag', 'tiny'], ['--json']].map((args) => [args, runInPty(['run', '--dir', tinyDir, '--base-url', serve.url, ...args])] as const)
      for (const [args, pty] of runs) {
        expect(await pty.exited(), args.join(' ')).toBe(0)
        expect(pty.text(), args.join(' ')).not.toContain('Which scenarios')
        expect(pty.text(), args.join(' ')).toMatch(args[0] === 'tiny-b' ? /^1 passed, 0 failed$/m : /2 passed, 0 failed|"passed": 2/)
      }
    })

    it('does not ask unless both stdin and stdout are terminals: it runs them all', async () => {
      const args = ['run', '--dir', tinyDir, '--base-url', serve.url]
      // stdin from a file, stdout the terminal; stdin the terminal, stdout a pipe.
      const runs = ['< /dev/null', '| cat'].map((redirect) => [redirect, runInPty(args, { redirect })] as const)
      // No terminal at all (a CI step).
      const piped = runCli(args)
      for (const [redirect, pty] of runs) {
        expect(await pty.exited(), redirect).toBe(0)
        expect(pty.text(), redirect).not.toContain('Which scenarios')
        expect(pty.text(), redirect).toMatch(/^2 passed, 0 failed$/m)
      }
      expect(await piped).toMatchObject({ code: 0, stderr: '', stdout: expect.stringMatching(/^2 passed, 0 failed$/m) })
      expect((await piped).stdout).not.toContain('Which scenarios')
    })

    it('does not ask in CI, even on a terminal (docker run -t without -i): it runs them all', async () => {
      const runs = ['true', '1'].map((ci) => [ci, runInPty(['run', '--dir', tinyDir, '--base-url', serve.url], { env: { CI: ci } })] as const)
      for (const [ci, pty] of runs) {
        expect(await pty.exited(), `CI=${ci}`).toBe(0)
        expect(pty.text(), `CI=${ci}`).not.toContain('Which scenarios')
        expect(pty.text(), `CI=${ci}`).toMatch(/^2 passed, 0 failed$/m)
      }
      // CI=false is not CI: the prompt shows.
      const local = runInPty(['run', '--dir', tinyDir, '--base-url', serve.url], { env: { CI: 'false' } })
      await local.waitFor('Which scenarios')
    })

    it('refuses a bad flag before asking, not after the scenarios are picked', async () => {
      const cases: Array<[string[], string]> = [
        [['--timeout', 'abc'], 'sandbox: --timeout: invalid duration "abc"'],
        [['--base-url', 'localhost:4010'], 'sandbox: --base-url must be an http(s) URL, got "localhost:4010"'],
        [['--api-key', 'pk_live_1'], 'sandbox: --api-key must be a sandbox key (sk_sandbox_...), got "pk_live_1"'],
      ]
      const runs = cases.map(([args, message]) => [args, message, runInPty(['run', '--dir', tinyDir, ...args])] as const)
      for (const [args, message, pty] of runs) {
        expect(await pty.exited(5000), args.join(' ')).toBe(2)
        expect(pty.text(), args.join(' ')).not.toContain('Which scenarios')
        expect(pty.text(), args.join(' ')).toContain(message)
      }
    })
  })

  describe('sandbox keys revoke|reset without KEY', () => {
    /** A keys file with two keys, written in-process (what `sandbox keys create` does), to spare two CLI runs per test. */
    async function twoKeys(): Promise<string> {
      const keysFile = join(await tempDir(), 'keys.json')
      for (const label of ['alpha', 'beta']) await addKey(keysFile, { label })
      return keysFile
    }
    const statuses = async (keysFile: string) => JSON.parse((await runCli(['keys', 'list', '--keys', keysFile, '--json'])).stdout).map((row: { label: string; status: string }) => `${row.label} ${row.status}`)

    it('asks which key, lists them masked with label and status, and revokes the one picked', async () => {
      const keysFile = await twoKeys()
      const pty = runInPty(['keys', 'revoke', '--keys', keysFile])
      await pty.waitFor('Which key to revoke?')
      await pty.waitFor(/❯ sk_sandbox_\w{4}…\w{4} {2}alpha {2}\(active\)\n {2}sk_sandbox_\w{4}…\w{4} {2}beta {2}\(active\)/)
      expect(pty.text()).not.toMatch(/sk_sandbox_\w{20,}/) // masked, not the whole key
      await pty.press(KEY.down, /❯ sk_sandbox_\S+ {2}beta/)
      const picked = pty.mark()
      pty.write(KEY.enter)
      expect(await pty.exited()).toBe(0)
      expect(pty.text(picked)).toMatch(/^sk_sandbox_\w{4}…\w{4} revoked; a server running with --keys on this keys file refuses it/m)
      expect(leavesCursorHidden(pty.raw())).toBe(false)
      expect(await statuses(keysFile)).toEqual(['alpha active', 'beta revoked'])
    })

    it('shows a label\'s control characters as escapes: a shared keys file cannot retitle the terminal', async () => {
      const keysFile = join(await tempDir(), 'keys.json')
      await addKey(keysFile, { label: '\u001b]0;pwned\u0007evil' })
      const pty = runInPty(['keys', 'revoke', '--keys', keysFile])
      await pty.waitFor('\\u001b]0;pwned\\u0007evil')
      expect(pty.raw()).not.toContain('\u001b]0;pwned')
      await expectCleanCtrlC(pty)
    })

    it('Ctrl+C at the prompt (keys reset) exits 130 cleanly and changes nothing', async () => {
      const keysFile = await twoKeys()
      const before = await readFile(keysFile, 'utf8')
      const pty = runInPty(['keys', 'reset', '--keys', keysFile])
      await pty.waitFor('Which key to reset?')
      await pty.press(KEY.down, /❯ sk_sandbox_\S+ {2}beta/)
      await expectCleanCtrlC(pty)
      expect(await readFile(keysFile, 'utf8')).toBe(before)
    })

    it('SIGTERM at the prompt exits 143 with the cursor shown again, and changes nothing', async () => {
      const keysFile = await twoKeys()
      const before = await readFile(keysFile, 'utf8')
      const pty = runInPty(['keys', 'revoke', '--keys', keysFile])
      await pty.waitFor('Which key to revoke?')
      pty.signal('SIGTERM')
      expect(await pty.exited()).toBe(143)
      expectCleanExit(pty, 'SIGTERM')
      expect(await readFile(keysFile, 'utf8')).toBe(before)
    })

    it('without a terminal, exits 2 naming the KEY argument instead of asking', async () => {
      const keysFile = await twoKeys()
      const before = await readFile(keysFile, 'utf8')
      const piped = ['revoke', 'reset'].map((verb) => [verb, runCli(['keys', verb, '--keys', keysFile])] as const)
      // stdout on the terminal but stdin not: a prompt could not be answered either.
      const pty = runInPty(['keys', 'revoke', '--keys', keysFile], { redirect: '< /dev/null' })
      for (const [verb, result] of piped) expect(await result).toEqual({ code: 2, stdout: '', stderr: `sandbox: missing KEY: sandbox keys ${verb} KEY\n` })
      expect(await pty.exited()).toBe(2)
      expect(pty.text()).toBe('sandbox: missing KEY: sandbox keys revoke KEY\n')
      // A terminal in CI: nobody there to answer either.
      const ci = runInPty(['keys', 'reset', '--keys', keysFile], { env: { CI: 'true' } })
      expect(await ci.exited()).toBe(2)
      expect(ci.text()).toBe('sandbox: missing KEY: sandbox keys reset KEY\n')
      expect(await readFile(keysFile, 'utf8')).toBe(before)
    })

    it('with no keys registered, says how to create one instead of an empty list', async () => {
      const pty = runInPty(['keys', 'revoke', '--keys', join(await tempDir(), 'none.json')])
      expect(await pty.exited()).toBe(2)
      expect(pty.text()).toMatch(/^sandbox: no keys in \S+none\.json; create one with "sandbox keys create"\n$/)
    })
  })

  describe('the API key for a server elsewhere (webhook deliveries)', () => {
    // Through a proxy on a closed local port: a request sent by mistake fails there, and never leaves this machine.
    const env = { HTTP_PROXY: 'http://127.0.0.1:9', http_proxy: 'http://127.0.0.1:9' }
    const remote = 'http://sandbox.example:4010'

    it('is asked for on a terminal and checked before any request', async () => {
      const pty = runInPty(['webhook', 'deliveries', '--base-url', remote], { env })
      await pty.waitFor(`API key for ${remote}`)
      pty.write(`pk_live_123${KEY.enter}`)
      expect(await pty.exited(5000)).toBe(2)
      expect(pty.text()).toContain('sandbox: the key must be a sandbox key (sk_sandbox_...), got "pk_live_123"\n')
    })

    it('is not asked for with --json: the JSON error names the flag and the variable', async () => {
      const pty = runInPty(['webhook', 'deliveries', '--json', '--base-url', remote], { env })
      expect(await pty.exited(5000)).toBe(2)
      expect(pty.text()).not.toContain('(sk_sandbox_...)')
      expect(pty.text()).toContain(`"message": "give the API key for ${remote} with --api-key or SANDBOX_API_KEY"`)
    })
  })

  describe('sandbox webhook sign', () => {
    it('with stdin on the terminal, exits 2 at once saying to pipe the body (no wait for typed input)', async () => {
      const pty = runInPty(['webhook', 'sign', '--secret', 'whsec_test'])
      expect(await pty.exited(5000)).toBe(2)
      expect(pty.text()).toBe('sandbox: pipe the body to sign on standard input: sandbox webhook sign --secret S < body.json\n')
    })

    it('without --secret, exits 2 naming the flag; with the body redirected, prints the headers', async () => {
      const dir = await tempDir()
      const body = join(dir, 'event.json')
      await writeFile(body, JSON.stringify({ id: 'evt_1', type: 'loan.created', data: {} }))
      const missing = runInPty(['webhook', 'sign'])
      const signed = runInPty(['webhook', 'sign', '--secret', 'whsec_test'], { redirect: `< '${body}'` })
      expect(await missing.exited()).toBe(2)
      expect(missing.text()).toBe('sandbox: missing --secret (or set SANDBOX_WEBHOOK_SECRET)\n')
      expect(await signed.exited()).toBe(0)
      expect(signed.text()).toMatch(/^content-type: application\/json\nx-service-webhook-id: evt_1\n/)
    })
  })

  describe('colours', () => {
    const args = () => ['run', 'tiny-a', '--dir', tinyDir, '--base-url', serve.url]

    it('are on at a terminal, also under an empty NO_COLOR', async () => {
      const runs = ([{}, { NO_COLOR: '' }] as Array<Record<string, string>>).map((env) => [env, runInPty(args(), { env })] as const)
      for (const [env, pty] of runs) {
        expect(await pty.exited()).toBe(0)
        expect(pty.raw(), JSON.stringify(env)).toMatch(COLOUR)
      }
    })

    it('are off under NO_COLOR=1, prompt included, and when piped', async () => {
      const pty = runInPty(args(), { env: { NO_COLOR: '1' } })
      const prompt = runInPty(['run', '--dir', tinyDir], { env: { NO_COLOR: '1' } })
      // Piped, without the NO_COLOR runCli adds: the pipe alone turns colour off.
      const piped = runCli(args(), { env: { NO_COLOR: '' } })
      expect(await pty.exited()).toBe(0)
      expect(pty.raw()).not.toMatch(COLOUR)
      await prompt.waitFor('Which scenarios to run?')
      await expectCleanCtrlC(prompt)
      expect(prompt.raw()).not.toMatch(COLOUR)
      expect((await piped).code).toBe(0)
      expect((await piped).stdout).not.toMatch(/\u001b\[/)
    })

    it('follow FORCE_COLOR as Node does: on through a pipe and over NO_COLOR, off at a terminal under 0', async () => {
      // FORCE_COLOR=1 is what a CI whose log shows colours sets, where output is always piped.
      const forced = [{ FORCE_COLOR: '1', NO_COLOR: '' }, { FORCE_COLOR: '1', NO_COLOR: '1' }, { FORCE_COLOR: '', NO_COLOR: '' }]
      const piped = forced.map((env) => [env, runCli(args(), { env })] as const)
      const off = runInPty(args(), { env: { FORCE_COLOR: '0' } })
      for (const [env, run] of piped) {
        expect((await run).code).toBe(0)
        expect((await run).stdout, JSON.stringify(env)).toMatch(/\u001b\[3\dm/)
      }
      expect(await off.exited()).toBe(0)
      expect(off.raw()).not.toMatch(COLOUR)
    })
  })
})
