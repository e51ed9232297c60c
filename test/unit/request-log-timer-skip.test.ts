import { createStorage } from 'unstorage'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createRequestLog, type RequestLogEntry } from '../../src/server/request-log.js'

const entry = (n: number): RequestLogEntry => ({ request_id: `req_${n}`, at: new Date(0).toISOString(), key: null, method: 'GET', path: '/api/sandbox/config', status: 200, error_code: null, idempotency_key: null, duration_ms: 0 })

afterEach(() => {
  vi.useRealTimers()
})

// The 500 ms timer flushes the log; a tick while a slow write runs is skipped, not queued behind it:
// queued ticks kept flushes back to back under load. Sandbox.flush() still gets its follow-up.
describe('the request log\'s timer', () => {
  it('skips a tick while a flush writes, and writes what came meanwhile at a later tick', async () => {
    vi.useFakeTimers()
    const storage = createStorage()
    const setItem = storage.setItem.bind(storage)
    let release!: () => void
    const gate = new Promise<void>((resolve) => { release = resolve })
    const written: string[][] = []
    storage.setItem = (async (key: string, value: unknown) => {
      if (key.startsWith('reqlog:0')) {
        written.push((value as Array<{ request_id: string }>).map((item) => item.request_id))
        if (written.length === 1) await gate
      }
      return setItem(key, value as never)
    }) as typeof storage.setItem
    const log = createRequestLog(storage)
    log.record('key-id', entry(1))
    await vi.advanceTimersByTimeAsync(500)
    log.record('key-id', entry(2))
    // Four ticks while the first bucket's write hangs.
    await vi.advanceTimersByTimeAsync(2000)
    release()
    await vi.advanceTimersByTimeAsync(0)
    expect(written).toEqual([['req_1']])
    await vi.advanceTimersByTimeAsync(500)
    expect(written).toEqual([['req_1'], ['req_2']])
    await log.close()
  })
})
