import { spawn } from 'node:child_process'
import { readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, runCli, startNodeProcess, startServe, waitUntil, type ServeProcess } from '../helpers/cli.js'
import { KEY, PTY_UNAVAILABLE, killPtys, runInPty } from '../helpers/pty.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => {
  killAll()
  killPtys()
})
const tempDir = useTempDirs('sandbox-run-watch')

/** A one-request scenario expecting STATUS from GET /config (the sandbox answers 200). */
function tinyScenario(status: number, tags: string[] = []): string {
  return JSON.stringify({ name: 'Tiny', description: 'reads the config', tags, steps: [{ name: 'config', request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status } }] }, null, 2)
}

/** A stack frame as Node prints one: none may reach the terminal. */
const STACK_FRAME = /^\s+at .+:\d+:\d+\)?$/m
/** CI machines are slow and shared: each wait gets wide margin. */
const WAIT_MS = 20_000

/** Starts `sandbox run --watch ARGS`; resolves with the in-process server's URL once it is up. */
function startWatch(args: string[]): Promise<ServeProcess> {
  return startNodeProcess([BIN, 'run', '--watch', ...args], /in-process server on (http:\/\/127\.0\.0\.1:\d+)/)
}

/**
 * Waits until the output after MARK holds a whole round: its summary or error, and the watching
 * line (stdout and stderr are two pipes here: their lines may come in either order).
 */
async function waitForRound(watch: ServeProcess, mark: number, what: string, until?: string): Promise<string> {
  const ended = (text: string) => /\nwatching .+ for changes; Ctrl\+C quits\n/.test(text) && /passed, \d+ failed\n|^sandbox: .*\n/m.test(text) && (until === undefined || text.includes(until))
  await waitUntil(() => ended(watch.output().slice(mark)), WAIT_MS, what)
    .catch((error: Error) => { throw new Error(`${error.message}; the output after the last round:\n${watch.output().slice(mark)}`) })
  return watch.output().slice(mark)
}

describe('sandbox run --watch', () => {
  it('runs again on each save against the same server, tells a broken file and waits for the fix, and stops on SIGINT with 0', async () => {
    const dir = await tempDir()
    const file = join(dir, 'tiny-a.json')
    await writeFile(file, tinyScenario(200))
    const watch = await startWatch(['--dir', dir])
    const first = await waitForRound(watch, 0, 'the first report')
    expect(first).toMatch(/^tiny-a — Tiny$/m)
    expect(first).toContain('1 passed, 0 failed')
    expect(first).toContain(`watching ${dir}/ for changes; Ctrl+C quits`)

    // A save that makes the scenario fail: a second report, with the failure.
    let mark = watch.output().length
    await writeFile(file, tinyScenario(404))
    const second = await waitForRound(watch, mark, 'the report after a save')
    expect(second).toContain(`${file} changed: running 1 scenario: tiny-a`)
    expect(second).toContain('      status\n        - expected 404\n        + received 200')
    expect(second).toContain('0 passed, 1 failed')
    // The server started once is the one every run goes to.
    expect(second).toContain(`against ${watch.url} (in-process server)`)

    // A file that does not parse: the error run prints, no stack, and the process keeps watching.
    mark = watch.output().length
    await writeFile(join(dir, 'tiny-b.json'), '{ "name": ')
    const broken = await waitForRound(watch, mark, 'the broken file\'s error', 'not valid JSON')
    expect(broken).toContain(`${join(dir, 'tiny-b.json')} added\n`)
    expect(broken).toMatch(/^sandbox: .*tiny-b\.json: not valid JSON \(line 1, column \d+\)/m)
    expect(broken).not.toMatch(STACK_FRAME)
    expect(broken).not.toContain('passed')
    expect(watch.child.exitCode).toBeNull()

    // The fix runs both again.
    mark = watch.output().length
    await writeFile(join(dir, 'tiny-b.json'), tinyScenario(200))
    const fixed = await waitForRound(watch, mark, 'the report after the fix')
    expect(fixed).toContain(`${join(dir, 'tiny-b.json')} changed: running 2 scenarios: tiny-a, tiny-b`)
    expect(fixed).toContain('1 passed, 1 failed')
    expect((await fetch(`${watch.url}/api/sandbox/openapi.json`)).status).toBe(200)

    expect(await watch.stop('SIGINT')).toBe(0)
    expect(watch.output()).toMatch(/\nwatch stopped \(SIGINT\)\n$/)
    expect(watch.output()).not.toMatch(STACK_FRAME)
    // The in-process server went with it.
    await expect(fetch(`${watch.url}/api/sandbox/openapi.json`)).rejects.toThrow()
  }, 90_000)

  it('watches a file named on the command line, saved through a rename, and keeps its --tag choice', async () => {
    const dir = await tempDir()
    const file = join(dir, 'mine.json')
    await writeFile(file, tinyScenario(200, ['fast']))
    const watch = await startWatch(['--tag', 'fast', file])
    await waitForRound(watch, 0, 'the first report')
    // As editors save atomically: a temp file, renamed over the scenario.
    let mark = watch.output().length
    await writeFile(`${file}.tmp`, tinyScenario(404, ['fast']))
    await rename(`${file}.tmp`, file)
    const saved = await waitForRound(watch, mark, 'the report after the save')
    expect(saved).toContain(`${file} changed: running 1 scenario: mine`)
    expect(saved).toContain('0 passed, 1 failed')
    // The tag taken off: --tag now chooses nothing, told as run tells it.
    mark = watch.output().length
    await writeFile(file, tinyScenario(200))
    const untagged = await waitForRound(watch, mark, 'the tag error', 'no scenario has the tag')
    expect(untagged).toContain('sandbox: no scenario has the tag fast')
    expect(await watch.stop('SIGTERM')).toBe(0)
    expect(watch.output()).toContain('watch stopped (SIGTERM)')
  }, 90_000)

  it('with --base-url sends every run to that server and starts none of its own', async () => {
    const serve = await startServe(['--port', '0', '--storage', 'memory', '--quiet'])
    const dir = await tempDir()
    const file = join(dir, 'tiny-a.json')
    await writeFile(file, tinyScenario(200))
    const watch = await startNodeProcess([BIN, 'run', '--watch', '--dir', dir, '--base-url', serve.url], /^(tiny-a) — /m)
    const first = await waitForRound(watch, 0, 'the first report')
    const mark = watch.output().length
    await writeFile(file, tinyScenario(200))
    const second = await waitForRound(watch, mark, 'the report after a save')
    for (const round of [first, second]) expect(round).toMatch(new RegExp(`1 request in \\d+ ms \\(\\d+ req/s\\) against ${serve.url}\n1 passed, 0 failed`))
    expect(watch.output()).not.toContain('in-process server')
    expect(await watch.stop('SIGINT')).toBe(0)
    expect((await fetch(`${serve.url}/api/sandbox/openapi.json`)).status).toBe(200)
    expect(await serve.stop()).toBe(0)
  }, 60_000)

  it('with --api-key gives each run a new in-process server, so a scenario that passes alone passes again on the next save', async () => {
    const dir = await tempDir()
    const file = join(dir, 'first-loan.json')
    // A partner's first scenario: it leaves its loan open, and expects the key to hold that one loan.
    const create = { method: 'POST', path: '/api/sandbox/loans', body: { collateral_btc: 0.05, loan_amount: 2000, loan_currency: 'USDT', external_client_id: 'client-1' } }
    await writeFile(file, JSON.stringify({ name: 'First loan', description: 'one loan on the key', steps: [{ name: 'create', request: create, expect: { status: 200, body: { activeLoans: { $length: 1 } } } }] }))
    const watch = await startNodeProcess([BIN, 'run', '--watch', '--dir', dir, '--api-key', 'sk_sandbox_partner_watch_key_1'], /^(first-loan) — /m)
    const first = await waitForRound(watch, 0, 'the first report')
    expect(first).toContain('1 passed, 0 failed')
    const mark = watch.output().length
    await writeFile(file, await readFile(file, 'utf8'))
    const second = await waitForRound(watch, mark, 'the report after a save')
    expect(second).toContain('1 passed, 0 failed')
    expect(watch.output()).toContain('in-process server: a new one for each run')
    expect(await watch.stop('SIGINT')).toBe(0)
  }, 60_000)

  it('ends with 0 when its stdout closes (run --watch | head), at the next run, leaving no process behind', async () => {
    const dir = await tempDir()
    const file = join(dir, 'tiny-a.json')
    await writeFile(file, tinyScenario(200))
    const child = spawn(process.execPath, [BIN, 'run', '--watch', '--dir', dir], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let exitCode: number | null | undefined
    child.once('exit', (code) => { exitCode = code })
    try {
      let out = ''
      child.stdout!.on('data', (chunk) => { out += chunk })
      await waitUntil(() => out.includes('for changes; Ctrl+C quits'), WAIT_MS, 'the first round')
      // The reader goes, as head does after its lines.
      child.stdout!.destroy()
      await writeFile(file, tinyScenario(200))
      await waitUntil(() => exitCode !== undefined, WAIT_MS, 'the watch to end')
      expect(exitCode).toBe(0)
    } finally {
      child.kill('SIGKILL')
    }
  }, 60_000)

  it('without arguments watches the directory the scenarios come from (the shipped one)', async () => {
    const watch = await startWatch(['--tag', 'webhooks'])
    const first = await waitForRound(watch, 0, 'the first report')
    expect(first).toMatch(/ passed, 0 failed\n/)
    expect(first).toContain(`watching ${join(import.meta.dirname, '../../scenarios')}/ for changes`)
    expect(await watch.stop('SIGINT')).toBe(0)
  }, 60_000)

  it('stops cleanly on SIGINT in the middle of a run', async () => {
    // The shipped scenarios: a run of them lasts long enough to be stopped in its middle.
    const watch = await startWatch([])
    await waitUntil(() => watch.output().includes('  ✓ '), WAIT_MS, 'the first step')
    expect(await watch.stop('SIGINT')).toBe(0)
    expect(watch.output()).toMatch(/\nwatch stopped \(SIGINT\)\n$/)
    expect(watch.output()).not.toMatch(STACK_FRAME)
    await expect(fetch(`${watch.url}/api/sandbox/openapi.json`)).rejects.toThrow()
  }, 60_000)

  it('refuses an id or a tag the shipped scenarios do not have (no save can fix it) with exit 2, as run does', async () => {
    const id = await runCli(['run', '--watch', 'repay-ful'])
    expect(id.code).toBe(2)
    expect(id.stderr).toContain('unknown scenario repay-ful (did you mean repay-full?)')
    expect(id.stdout).not.toContain('watching')
    const tag = await runCli(['run', '--watch', '--tag', 'smok'])
    expect(tag.code).toBe(2)
    expect(tag.stderr).toContain('no scenario has the tag smok (did you mean smoke?)')
    // A scenario file named beside an id may still be written: only the id is checked up front.
    const withFile = await runCli(['run', '--watch', 'repay-ful', join(await tempDir(), 'new.json')])
    expect(withFile.code).toBe(2)
    expect(withFile.stderr).toContain('unknown scenario repay-ful')
  }, 60_000)

  it('refuses flags that end with a document, and GitHub Actions, with exit 2', async () => {
    const json = await runCli(['run', '--watch', '--json'])
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'USAGE', message: expect.stringContaining('--watch cannot be used with --json') } })
    for (const flag of [['--junit', 'report.xml'], ['--list'], ['--schema']]) {
      const refused = await runCli(['run', '--watch', ...flag])
      expect(refused.code, flag[0]).toBe(2)
      expect(refused.stderr, flag[0]).toContain(`--watch cannot be used with ${flag[0]}`)
    }
    const github = await runCli(['run', '--watch'], { env: { GITHUB_ACTIONS: 'true' } })
    expect(github.code).toBe(2)
    expect(github.stderr).toContain('under GitHub Actions (GITHUB_ACTIONS=true) it would hold the job until its timeout')
  }, 60_000)
})

describe.skipIf(PTY_UNAVAILABLE !== '')(`sandbox run --watch on a terminal${PTY_UNAVAILABLE ? ` (skipped: ${PTY_UNAVAILABLE})` : ''}`, () => {
  it('runs again on Enter, quits on q, and ends on Ctrl+C as on SIGINT', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'tiny-a.json'), tinyScenario(200))
    const pty = runInPty(['run', '--watch', '--dir', dir])
    await pty.waitFor('for changes; Enter runs again, q then Enter quits', { timeoutMs: WAIT_MS })
    await pty.press(KEY.enter, /rerun: running 1 scenario: tiny-a[\s\S]*1 passed, 0 failed[\s\S]*Enter runs again, q then Enter quits/)
    await pty.press(`q${KEY.enter}`, 'watch stopped (q)')
    expect(await pty.exited()).toBe(0)
    expect(pty.text()).not.toMatch(STACK_FRAME)

    const again = runInPty(['run', '--watch', '--dir', dir])
    await again.waitFor('for changes; Enter runs again, q then Enter quits', { timeoutMs: WAIT_MS })
    again.write(KEY.ctrlC)
    expect(await again.exited()).toBe(0)
    expect(again.text()).toContain('watch stopped (SIGINT)')
  }, 60_000)
})
