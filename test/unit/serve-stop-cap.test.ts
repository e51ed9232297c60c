import { afterEach, describe, expect, it, vi } from 'vitest'
import { createServeStop } from '../../src/cli/serve-stop.js'

afterEach(() => {
  vi.restoreAllMocks()
})

function captureExit(): { output: string[]; exited: Promise<number> } {
  const output: string[] = []
  const capture = (chunk: unknown) => { output.push(String(chunk)); return true }
  vi.spyOn(process.stdout, 'write').mockImplementation(capture)
  vi.spyOn(process.stderr, 'write').mockImplementation(capture)
  let exit!: (code: number) => void
  const exited = new Promise<number>((resolve) => { exit = resolve })
  // Recorded, not carried out: the stop's own timer calls it, where a throw would escape the test.
  vi.spyOn(process, 'exit').mockImplementation(((code?: number) => { exit(Number(code ?? 0)) }) as typeof process.exit)
  return { output, exited }
}

const timers = { stop: () => {} }

// A storage that stopped answering (a paused redis) made each last write wait out its own timeout.
describe('serve\'s stop', () => {
  it('gives up on storage that does not answer after its cap: exit 1, saying why', async () => {
    const { output, exited } = captureExit()
    const stop = createServeStop({ json: false, idleGc: timers, youngCap: timers, listener: { close: async () => {} }, sandbox: { close: () => new Promise<void>(() => {}) } }, 200)
    void stop('SIGTERM')
    expect(await exited).toBe(1)
    expect(output.join('')).toMatch(/^storage error: stopped after 0\.2 s without storage's last writes: storage did not answer \(a redis paused or unreachable, a hung disk\); what was answered is kept/m)
  })

  it('says it in JSON with --json-logs, and exits 0 as before when storage answers in time', async () => {
    const json = captureExit()
    void createServeStop({ json: true, idleGc: timers, youngCap: timers, listener: { close: async () => {} }, sandbox: { close: () => new Promise<void>(() => {}) } }, 200)('SIGINT')
    expect(await json.exited).toBe(1)
    expect(JSON.parse(json.output.join('').trim())).toMatchObject({ level: 'error', event: 'storage_error', message: expect.stringMatching(/^stopped after 0\.2 s/) })
    vi.restoreAllMocks()
    const quick = captureExit()
    void createServeStop({ json: false, idleGc: timers, youngCap: timers, listener: { close: async () => {} }, sandbox: { close: async () => {} } }, 200)('SIGTERM')
    expect(await quick.exited).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(quick.output.join('')).toBe('sandbox stopped (SIGTERM)\n')
  })
})
