import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { createRequestLog, type RequestLogEntry } from '../../src/server/request-log.js'
import { readRequestLog } from '../../src/server/read-request-log.js'

const entry = (n: number): RequestLogEntry => ({ request_id: `req_${n}`, at: new Date(0).toISOString(), key: null, method: 'GET', path: '/api/sandbox/config', status: 200, error_code: null, idempotency_key: null, duration_ms: 0 })

// Under steady load a request is logged while every bucket is being written. A flush that wrote
// until the buffer was empty never ended then, and a stop (or Sandbox.flush()) waited for the load to end.
describe('request log flush under steady load', () => {
  it('writes one bucket per flush, leaving what came during its write to the next', async () => {
    const storage = createStorage()
    const setItem = storage.setItem.bind(storage)
    let sent = 0
    let bucketWrites = 0
    const log = createRequestLog(storage)
    storage.setItem = (async (key: string, value: unknown) => {
      if (key.startsWith('reqlog:0')) {
        bucketWrites++
        // A request answered while this bucket is written; the load ends after 100 of them.
        if (sent < 100) log.record('key-id', entry(++sent))
      }
      return setItem(key, value as never)
    }) as typeof storage.setItem
    log.record('key-id', entry(0))
    await log.flush()
    expect(bucketWrites).toBe(1)
    expect((await readRequestLog(storage)).map((read) => read.request_id)).toEqual(['req_0'])
    await log.flush()
    expect(bucketWrites).toBe(2)
    expect((await readRequestLog(storage)).map((read) => read.request_id)).toEqual(['req_0', 'req_1'])
    await log.close()
  })
})
