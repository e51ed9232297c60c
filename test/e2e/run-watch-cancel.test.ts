import { rename, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, runScriptToEnd, startNodeProcess, waitUntil } from '../helpers/cli.js'
import { KEY, PTY_UNAVAILABLE, killPtys, runInPty } from '../helpers/pty.js'
import { startSilentServer } from '../helpers/silent-server.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  killAll()
  killPtys()
  for (const close of closers.splice(0)) await close()
})
const tempDir = useTempDirs('sandbox-run-watch-cancel')

/** A stack frame as Node prints one: none may reach the terminal. */
const STACK_FRAME = /^\s+at .+:\d+:\d+\)?$/m
/** CI machines are slow and shared: each wait gets wide margin. */
const WAIT_MS = 20_000
/** How long a cancel may take before the test calls it broken: a failure cutoff, far above the fraction of a second it takes. */
const CANCEL_CUTOFF_MS = 10_000

const readsConfig = { name: 'config', request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status: 200 } }
/** The runner's receiver registered, then a minute's wait for a webhook nothing sends: a run that would sit there without a cancel. */
const registers = { name: 'register', request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } }, expect: { status: 200 } }
const waitsForever = { name: 'never comes', wait_for_webhook: { type: 'sandbox.webhook.test', timeout_ms: 60_000 } }
/**
 * Saves TEXT to FILE as editors that save atomically do, through a hidden temp file renamed over
 * it: a plain write truncates first, and on a busy machine the watch could read the empty file
 * before the write (and report it as a save of its own) when the two came over 150 ms apart.
 */
async function saveAtomically(file: string, text: string): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.tmp`)
  await writeFile(temp, text)
  await rename(temp, file)
}
const scenarioFile = (steps: unknown[]) => JSON.stringify({ name: 'Draft', description: 'a scenario being written', steps }, null, 2)

describe('sandbox run --watch cancels the run in progress on a save', () => {
  it('a save while a scenario waits for a webhook: one line says the run was cancelled, and the new run starts and reports in full', async () => {
    const dir = await tempDir()
    const file = join(dir, 'draft.json')
    await writeFile(file, scenarioFile([readsConfig, registers, waitsForever]))
    const watch = await startNodeProcess([BIN, 'run', '--watch', '--dir', dir], /in-process server on (http:\/\/127\.0\.0\.1:\d+)/)
    // The step before the wait is told as the wait begins.
    await waitUntil(() => /✓ POST +\/api\/sandbox\/webhooks/.test(watch.output()), WAIT_MS, 'the step before the wait')
    const mark = watch.output().length
    // The partner's fix: the wait taken out.
    await saveAtomically(file, scenarioFile([readsConfig]))
    const after = () => watch.output().slice(mark)
    await waitUntil(() => after().includes(`${file} changed: running 1 scenario: draft`), CANCEL_CUTOFF_MS, 'the cancel and the new run')
      .catch((error: Error) => { throw new Error(`${error.message}; the output after the save:\n${after()}`) })
    expect(after()).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} changed: run cancelled\n\n.* changed: running 1 scenario: draft\n`))
    await waitUntil(() => /\nwatching .+ for changes; Ctrl\+C quits\n/.test(after()), WAIT_MS, 'the new run\'s report')
    expect(after()).toMatch(/^draft — Draft\n {2}✓ GET +\/api\/sandbox\/config 200 .*\n\n1 scenario, 1 request in \d+ ms .*\n1 passed, 0 failed\n/m)
    // The run cut off is no failure: no report of it, no summary, no stack.
    expect(watch.output()).not.toMatch(/✗|Failed scenarios|no delivery of|sandbox: /)
    expect(watch.output().match(/ passed, /g)).toHaveLength(1)
    expect(watch.output()).not.toMatch(STACK_FRAME)
    expect(await watch.stop('SIGINT')).toBe(0)
  }, 60_000)

  it('a save while the --base-url server does not answer: the request is dropped, the new run starts, and SIGINT then stops with nothing after', async () => {
    const silent = await startSilentServer()
    closers.push(silent.close)
    const dir = await tempDir()
    const file = join(dir, 'hang.json')
    await writeFile(file, scenarioFile([readsConfig]))
    const watch = await startNodeProcess([BIN, 'run', '--watch', '--dir', dir, '--base-url', silent.url], /^(hang) — /m)
    await waitUntil(() => silent.requests() === 1, WAIT_MS, 'the first request')
    const mark = watch.output().length
    await saveAtomically(file, scenarioFile([readsConfig]))
    await waitUntil(() => watch.output().slice(mark).includes(`${file} changed: running 1 scenario: hang`), CANCEL_CUTOFF_MS, 'the cancel and the new run')
      .catch((error: Error) => { throw new Error(`${error.message}; the output after the save:\n${watch.output().slice(mark)}`) })
    expect(watch.output().slice(mark)).toContain(`${file} changed: run cancelled\n`)
    // The first run's request went with it, before its 10 s timeout.
    await expect.poll(silent.dropped).toBe(1)
    await waitUntil(() => silent.requests() === 2, WAIT_MS, 'the new run\'s request')
    // Stopped in the middle of that run: the run aborted says nothing more.
    expect(await watch.stop('SIGINT')).toBe(0)
    expect(watch.output()).toMatch(/\nhang — Draft\nwatch stopped \(SIGINT\)\n$/)
    expect(watch.output()).not.toMatch(/network error|passed, |✗/)
  }, 60_000)
})

describe.skipIf(PTY_UNAVAILABLE !== '')(`sandbox run --watch on a terminal, during a run${PTY_UNAVAILABLE ? ` (skipped: ${PTY_UNAVAILABLE})` : ''}`, () => {
  it('Enter cancels the run and runs again; q stops the watch with nothing printed after it', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'draft.json'), scenarioFile([readsConfig, registers, waitsForever]))
    const pty = runInPty(['run', '--watch', '--dir', dir])
    await pty.waitFor(/✓ POST +\/api\/sandbox\/webhooks/, { timeoutMs: WAIT_MS })
    let mark = pty.mark()
    // Up to the new run's wait: a step line it printed after the q pressed below read as output of the stop.
    await pty.press(KEY.enter, /rerun: running 1 scenario: draft\n.*\n.*✓ GET +\/api\/sandbox\/config.*\n.*✓ POST +\/api\/sandbox\/webhooks/)
    expect(pty.text(mark)).toMatch(/^\s*rerun: run cancelled\n\nrerun: running 1 scenario: draft\n/)
    mark = pty.mark()
    await pty.press(`q${KEY.enter}`, 'watch stopped (q)')
    expect(await pty.exited()).toBe(0)
    // The terminal echoes the q typed; then the one line, and nothing of the run it cut off.
    expect(pty.text(mark)).toMatch(/^\s*q\s*\nwatch stopped \(q\)\n?$/)
    expect(pty.text()).not.toMatch(/✗|passed, |no delivery of/)
  }, 60_000)
})

describe('runScenarios with an AbortSignal, in a script of its own', () => {
  it('rejects with the abort\'s reason and leaves nothing behind: the process ends by itself', async () => {
    const dist = pathToFileURL(join(import.meta.dirname, '../../dist/index.js')).href
    const script = `
      import { createServer } from 'node:net'
      import { parseScenario, runScenarios } from ${JSON.stringify(dist)}
      const scenario = (steps) => parseScenario('s.json', JSON.stringify({ name: 's', description: 's', steps }))
      const register = { request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } }, expect: { status: 200 } }
      const first = new AbortController()
      await runScenarios([scenario([register, ${JSON.stringify(waitsForever)}])], { signal: first.signal, onStep: () => setTimeout(() => first.abort(new Error('draft.json changed')), 50) })
        .then(() => console.log('first: finished'), (error) => console.log('first: ' + error.message))
      // A server that never answers, closed after the run: its close waits until the run's connection is gone.
      const second = new AbortController()
      const silent = createServer((socket) => socket.once('data', () => second.abort()).resume())
      await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve))
      await runScenarios([scenario([${JSON.stringify(readsConfig)}])], { baseUrl: 'http://127.0.0.1:' + silent.address().port, signal: second.signal })
        .then(() => console.log('second: finished'), (error) => console.log('second: ' + error.name))
      silent.close()
    `
    // No process.exit in the script: a timer or socket left by either run would keep it up for the wait's minute.
    const { output, exitCode } = await runScriptToEnd(script, CANCEL_CUTOFF_MS + 5_000)
    expect(output).toBe('first: draft.json changed\nsecond: AbortError\n')
    expect(exitCode).toBe(0)
  }, 60_000)
})
