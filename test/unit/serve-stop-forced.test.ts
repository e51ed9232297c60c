import { afterEach, describe, expect, it, vi } from 'vitest'
import { createServeStop } from '../../src/cli/serve-stop.js'

afterEach(() => {
  vi.restoreAllMocks()
  // The stop's notice and cap timers never fire: the stop under test never ends on its own.
  vi.useRealTimers()
})

const timers = { stop: () => {} }

// A log collector reads --json-logs from stdout: the forced stop's line went to stderr, the one
// JSON event of serve that did, so the collector saw a stop with no line saying what was cut off.
describe('serve\'s second signal with --json-logs', () => {
  it('writes the forced_stop event to stdout, with the other JSON lines', async () => {
    const stdout: string[] = []
    const stderr: string[] = []
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => { stdout.push(String(chunk)); return true })
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => { stderr.push(String(chunk)); return true })
    vi.useFakeTimers()
    const codes: number[] = []
    vi.spyOn(process, 'exit').mockImplementation(((code?: number) => { codes.push(Number(code ?? 0)) }) as typeof process.exit)
    const stop = createServeStop({ json: true, idleGc: timers, youngCap: timers, listener: { close: () => new Promise<void>(() => {}) }, sandbox: { close: async () => {} } }, 60_000)
    void stop('SIGINT')
    await stop('SIGINT')
    expect(codes).toEqual([130])
    expect(stderr).toEqual([])
    expect(JSON.parse(stdout.join('').trim())).toMatchObject({ level: 'warn', event: 'forced_stop', signal: 'SIGINT' })
  })
})

// A closed terminal or dropped ssh session sends SIGHUP: it stops serve as SIGTERM does.
describe('serve stopped by SIGHUP', () => {
  it('says to send SIGHUP again to stop now, and a second one exits 129', async () => {
    const stdout: string[] = []
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => { stdout.push(String(chunk)); return true })
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    vi.useFakeTimers()
    const codes: number[] = []
    vi.spyOn(process, 'exit').mockImplementation(((code?: number) => { codes.push(Number(code ?? 0)) }) as typeof process.exit)
    const stop = createServeStop({ json: false, idleGc: timers, youngCap: timers, listener: { close: () => new Promise<void>(() => {}) }, sandbox: { close: () => new Promise<void>(() => {}) } }, 60_000)
    void stop('SIGHUP')
    await vi.advanceTimersByTimeAsync(1000)
    expect(stdout.join('')).toContain('stopping: waiting for requests and webhook deliveries in flight (up to 10 s); send SIGHUP again to stop now')
    await stop('SIGHUP')
    expect(codes).toEqual([129])
  })
})
