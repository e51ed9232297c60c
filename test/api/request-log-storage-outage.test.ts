import { describe, expect, it } from 'vitest'
import { createStorage, type Storage } from 'unstorage'
import { createRequestLog, type RequestLogEntry } from '../../src/server/request-log.js'
import { readRequestLog } from '../../src/server/read-request-log.js'

const entry = (n: number): RequestLogEntry => ({ request_id: `req_${n}`, at: new Date(0).toISOString(), key: null, method: 'GET', path: '/api/sandbox/config', status: 200, error_code: null, idempotency_key: null, duration_ms: 0 })
const ids = (entries: RequestLogEntry[]) => entries.map((read) => read.request_id)
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, n) => `req_${from + n}`)

/** A storage that fails every call while `down` is set, as redis does while it is gone. */
function createFlakyStorage(): { storage: Storage; down: boolean } {
  const flaky = { storage: createStorage(), down: false }
  const base = flaky.storage
  const wrapped = Object.create(base) as Storage
  for (const method of ['getKeys', 'setItem', 'removeItem'] as const) {
    const original = base[method].bind(base) as (...args: unknown[]) => Promise<unknown>
    ;(wrapped as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => flaky.down ? Promise.reject(new Error('redis is not connected')) : original(...args)
  }
  flaky.storage = wrapped
  return flaky
}

describe('the request log while its storage is down (redis gone), then back', () => {
  it('keeps no more than its limit of the requests made meanwhile: the newest, as retention would', async () => {
    const flaky = createFlakyStorage()
    const log = createRequestLog(flaky.storage, { limit: 5 })
    flaky.down = true
    for (let n = 0; n < 12; n++) log.record('key-id', entry(n))
    await log.flush()
    for (let n = 12; n < 15; n++) log.record('key-id', entry(n))
    await log.flush()
    flaky.down = false
    await log.close()
    // The newest, in whole buckets as retention keeps them: not all 15 in one bucket.
    const kept = ids(await readRequestLog(flaky.storage))
    expect(kept.length).toBeLessThanOrEqual(5)
    expect(kept).toEqual(range(15 - kept.length, 15))
  })

  it('shows each request once when a bucket write that failed (timed out) reached storage after all', async () => {
    const flaky = createFlakyStorage()
    const log = createRequestLog(flaky.storage)
    const base = Object.getPrototypeOf(flaky.storage) as Storage
    // As a write to a paused redis does: answered with a timeout, carried out once it runs again.
    flaky.storage.setItem = async (...args: Parameters<Storage['setItem']>) => {
      await base.setItem(...args)
      throw new Error('Command timed out')
    }
    for (let n = 0; n < 3; n++) log.record('key-id', entry(n))
    await log.flush()
    delete (flaky.storage as Partial<Storage>).setItem
    log.record('key-id', entry(3))
    await log.close()
    expect(ids(await readRequestLog(flaky.storage))).toEqual(range(0, 4))
  })

  it('still rolls off the buckets of an earlier run when the first listing of this run failed', async () => {
    const flaky = createFlakyStorage()
    const earlier = createRequestLog(flaky.storage, { limit: 5 })
    for (let n = 0; n < 5; n++) {
      earlier.record('key-id', entry(n))
      await earlier.flush()
    }
    await earlier.close()
    // That run's names are a millisecond apart, ahead of the clock: this one comes later.
    await new Promise((resolve) => setTimeout(resolve, 20))
    // The next server's first flush finds storage down; the ones after it find it back.
    const log = createRequestLog(flaky.storage, { limit: 5 })
    flaky.down = true
    log.record('key-id', entry(5))
    await log.flush()
    flaky.down = false
    for (let n = 6; n < 9; n++) {
      log.record('key-id', entry(n))
      await log.flush()
    }
    await log.close()
    expect(ids(await readRequestLog(flaky.storage))).toEqual(range(4, 9))
  })
})
