import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { createRequestLog, type RequestLogEntry } from '../../src/server/request-log.js'
import { readRequestLog } from '../../src/server/read-request-log.js'

const entry = (n: number): RequestLogEntry => ({ request_id: `req_${n}`, at: new Date(0).toISOString(), key: null, method: 'GET', path: '/api/sandbox/config', status: 200, error_code: null, idempotency_key: null, duration_ms: 0 })

// `Sandbox.flush()` promises the request log is written when it resolves; the server's own timer
// flushes every 500 ms, and a flush asked for while that one writes must still write what came since.
describe('request log flush asked for while a flush is writing', () => {
  it('writes the entries recorded after the running flush took its own', async () => {
    const storage = createStorage()
    let release!: () => void
    const gate = new Promise<void>((resolve) => { release = resolve })
    const setItem = storage.setItem.bind(storage)
    let held = false
    storage.setItem = (async (key: string, value: unknown) => {
      // The first bucket's write is slow (a busy disk), the rest go through.
      if (!held && key.startsWith('reqlog:0')) {
        held = true
        await gate
      }
      return setItem(key, value as never)
    }) as typeof storage.setItem
    const log = createRequestLog(storage)
    log.record('key-id', entry(1))
    const running = log.flush()
    log.record('key-id', entry(2))
    const asked = log.flush()
    release()
    await Promise.all([running, asked])
    expect((await readRequestLog(storage)).map((read) => read.request_id)).toEqual(['req_1', 'req_2'])
    await log.close()
  })
})
