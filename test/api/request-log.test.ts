import { afterEach, describe, expect, it } from 'vitest'
import { createStorage, type Storage } from 'unstorage'
import { createRequestLog, HEAD_BUCKETS, HEAD_KEY, type RequestLog, type RequestLogEntry } from '../../src/server/request-log.js'
import { followRequestLog, readRequestLog } from '../../src/server/read-request-log.js'
import { createTestApi, newKey, type TestApi } from '../helpers/api.js'
import { installWallClock } from '../helpers/wall-clock.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

describe('request log', () => {
  it('logs each request per key with request_id, status, error_code and Idempotency-Key', async () => {
    const seen: string[] = []
    api = await createTestApi({ onRequest: (entry) => seen.push(entry.request_id) })
    const ok = await api.get('/api/sandbox/config')
    const refused = await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }, { idempotencyKey: 'idem-log-1' })
    const replayed = await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }, { idempotencyKey: 'idem-log-1' })
    await api.get('/api/sandbox/config', newKey('other'))
    const keyless = await api.call('GET', '/api/sandbox/config', { key: null })
    const nowhere = await api.get('/api/sandbox/nowhere')
    await api.sandbox.flush()

    const mine = await readRequestLog(api.sandbox.storage, { apiKey: api.key })
    expect(mine.map((entry) => [entry.request_id, entry.method, entry.path, entry.status, entry.error_code, entry.idempotency_key])).toEqual([
      [ok.body.request_id, 'GET', '/api/sandbox/config', 200, null, null],
      [refused.body.request_id, 'POST', '/api/sandbox/loans/flow', 409, 'FLOW_CONFLICT', 'idem-log-1'],
      // A replayed refusal is logged with its error code too.
      [replayed.body.request_id, 'POST', '/api/sandbox/loans/flow', 409, 'FLOW_CONFLICT', 'idem-log-1'],
      [nowhere.body.request_id, 'GET', '/api/sandbox/nowhere', 404, 'NOT_FOUND', null],
    ])
    expect(mine[0]!.key).not.toContain(api.key.slice(12))
    expect(mine[0]!.duration_ms).toBeGreaterThanOrEqual(0)
    // A request with no key is printed (onRequest) but not stored: nobody's log to fill.
    const all = await readRequestLog(api.sandbox.storage)
    expect(all).toHaveLength(5)
    expect(all.map((entry) => entry.request_id)).not.toContain(keyless.body.request_id)
    expect(seen).toHaveLength(6)
    expect(seen).toContain(keyless.body.request_id)
  })

  it('keeps at most 256 characters of a path or Idempotency-Key a client sends, however long', async () => {
    const printed: string[] = []
    api = await createTestApi({ onRequest: (entry) => printed.push(entry.path) })
    const longPath = `/api/sandbox/${'p'.repeat(15_000)}`
    const longIdem = 'i'.repeat(15_000)
    await api.get(longPath)
    await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }, { idempotencyKey: longIdem })
    await api.sandbox.flush()

    const [missing, refused] = await readRequestLog(api.sandbox.storage, { apiKey: api.key })
    expect([missing!.status, missing!.path]).toEqual([404, `${longPath.slice(0, 256)}…`])
    expect([refused!.status, refused!.error_code, refused!.idempotency_key]).toEqual([400, 'INVALID_REQUEST', `${'i'.repeat(256)}…`])
    expect(printed[0]).toBe(missing!.path)
  })

  it('keeps requests in the order they were made when the clock is set back between them', async () => {
    api = await createTestApi()
    const first = await api.get('/api/sandbox/config')
    await api.sandbox.flush()
    const clock = installWallClock()
    try {
      clock.jump(-3_600_000)
      const second = await api.get('/api/sandbox/config')
      await api.sandbox.flush()
      const third = await api.get('/api/sandbox/nowhere')
      await api.sandbox.flush()
      const log = await readRequestLog(api.sandbox.storage, { apiKey: api.key })
      expect(log.map((entry) => entry.request_id)).toEqual([first.body.request_id, second.body.request_id, third.body.request_id])
      // Each entry keeps the time its request was made, as the clock read it.
      expect(Date.parse(log[1]!.at)).toBeLessThan(Date.parse(log[0]!.at))
      expect(await readRequestLog(api.sandbox.storage, { limit: 1 })).toMatchObject([{ request_id: third.body.request_id }])
      // No limit, as 0 always meant for the library's readers: every entry.
      expect(await readRequestLog(api.sandbox.storage, { limit: 0 })).toHaveLength(3)
    } finally {
      clock.restore()
    }
  })
})

describe('following the request log (sandbox logs --follow)', () => {
  const entry = (n: number): RequestLogEntry => ({ request_id: `req_${n}`, at: new Date(0).toISOString(), key: null, method: 'GET', path: '/api/sandbox/config', status: 200, error_code: null, idempotency_key: null, duration_ms: 0 })
  const ids = (entries: RequestLogEntry[]) => entries.map((read) => read.request_id)
  /** The storage as a follower sees it, counting calls of `method` (each weighed by `weigh`, 1 by default). */
  function countCalls(storage: Storage, method: 'getKeys' | 'getItems', weigh: (args: unknown[]) => number = () => 1) {
    const counted = { calls: 0, storage: Object.create(storage) as Storage }
    const original = storage[method] as (...args: unknown[]) => unknown
    ;(counted.storage as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      counted.calls += weigh(args)
      return original(...args)
    }
    return counted
  }
  /** Records requests `from` to `to - 1`, each in a bucket of its own (one flush each), under `keyId`. */
  async function writeBuckets(log: RequestLog, from: number, to: number, keyId = (_n: number) => 'key-id', key = (_n: number): string | null => null) {
    for (let n = from; n < to; n++) {
      log.record(keyId(n), { ...entry(n), key: key(n) })
      await log.flush()
    }
  }

  it('returns each request once while the log rolls over', async () => {
    const storage = createStorage()
    const log = createRequestLog(storage, { limit: 5 })
    const follower = followRequestLog(storage, { readsPerListing: 7 })
    const printed: string[] = []
    // A server busy for a long while: one bucket a flush, the oldest rolling off past 5 entries.
    for (let n = 0; n < 200; n++) {
      log.record('key-id', entry(n))
      await log.flush()
      printed.push(...ids(await follower.read()))
    }
    await log.close()
    expect(printed).toEqual(Array.from({ length: 200 }, (_, n) => `req_${n}`))
  })

  it('reads the head of the log on each read, and lists the whole log only every readsPerListing reads', async () => {
    const storage = createStorage()
    const log = createRequestLog(storage)
    const counted = countCalls(storage, 'getKeys')
    const follower = followRequestLog(counted.storage, { readsPerListing: 60 })
    const printed: string[] = []
    for (let n = 0; n < 100; n++) {
      log.record('key-id', entry(n))
      await log.flush()
      printed.push(...ids(await follower.read()))
    }
    await log.close()
    expect(printed).toEqual(Array.from({ length: 100 }, (_, n) => `req_${n}`))
    // The first read, and the 62nd (60 reads of the head after the first listing).
    expect(counted.calls).toBe(2)
  })

  it('lists the log to catch up when more buckets were written since the last read than the head names', async () => {
    const storage = createStorage()
    const log = createRequestLog(storage)
    const counted = countCalls(storage, 'getKeys')
    const follower = followRequestLog(counted.storage)
    await writeBuckets(log, 0, 1)
    expect(ids(await follower.read())).toEqual(['req_0'])
    const written = HEAD_BUCKETS + 20
    await writeBuckets(log, 1, written + 1)
    await log.close()
    expect(ids(await follower.read())).toEqual(Array.from({ length: written }, (_, n) => `req_${n + 1}`))
    expect(counted.calls).toBe(2)
    expect(await follower.read()).toEqual([])
  })

  it('reads a bucket the head names once it is stored (a checkpoint can store a newer bucket first)', async () => {
    const storage = createStorage()
    const follower = followRequestLog(storage)
    const [early, late] = ['reqlog:000000000000001-000000-1', 'reqlog:000000000000002-000001-1']
    await storage.setItem(HEAD_KEY, { buckets: [early, late] })
    await storage.setItem(late, [{ ...entry(2), key_id: 'key-id' }])
    expect(ids(await follower.read())).toEqual(['req_2'])
    expect(await follower.read()).toEqual([])
    await storage.setItem(early, [{ ...entry(1), key_id: 'key-id' }])
    expect(ids(await follower.read())).toEqual(['req_1'])
    expect(await follower.read()).toEqual([])
  })

  it('lists the log when the head names something other than this version\'s buckets (a head of another version)', async () => {
    const storage = createStorage()
    const log = createRequestLog(storage)
    await writeBuckets(log, 0, 2)
    await log.close()
    // Names of another shape: followed as they are, they were read as buckets and the log's own never.
    await storage.setItem(HEAD_KEY, { buckets: ['reqlog:zzzz', { name: 'reqlog:000000000000009-000009-1' }] })
    const follower = followRequestLog(storage)
    expect(ids(await follower.read())).toEqual(['req_0', 'req_1'])
    await storage.setItem(HEAD_KEY, { buckets: ['reqlog:zzzz'] })
    const log2 = createRequestLog(storage)
    await writeBuckets(log2, 2, 3)
    await log2.close()
    await storage.setItem(HEAD_KEY, { buckets: ['reqlog:zzzz'] })
    expect(ids(await follower.read())).toEqual(['req_2'])
  })

  it('follows a log with no head (written by an earlier version) by listing it', async () => {
    const storage = createStorage()
    const log = createRequestLog(storage)
    const follower = followRequestLog(storage)
    const printed: string[] = []
    for (let n = 0; n < 5; n++) {
      log.record('key-id', entry(n))
      await log.flush()
      await storage.removeItem(HEAD_KEY)
      printed.push(...ids(await follower.read()))
    }
    await log.close()
    expect(printed).toEqual(['req_0', 'req_1', 'req_2', 'req_3', 'req_4'])
  })

  it('starts from the last `tail` entries, of the key when filtered, reading buckets from the newest back only', async () => {
    const storage = createStorage()
    const log = createRequestLog(storage)
    const mineEvery10 = (n: number) => n % 10 === 0
    await writeBuckets(log, 0, 300, (n) => (mineEvery10(n) ? 'mine' : 'other'), (n) => (mineEvery10(n) ? 'sk_sandbox_mine…0000' : 'sk_sandbox_othe…0000'))
    // Weighed by the buckets asked for.
    const counted = countCalls(storage, 'getItems', (args) => (args[0] as string[]).length)
    const last = followRequestLog(counted.storage, { tail: 3 })
    expect(ids(await last.read())).toEqual(['req_297', 'req_298', 'req_299'])
    expect(counted.calls).toBeGreaterThan(0)
    expect(counted.calls).toBeLessThan(100)
    const mine = followRequestLog(storage, { maskedKey: 'sk_sandbox_mine…0000', tail: 2 })
    expect(ids(await mine.read())).toEqual(['req_280', 'req_290'])
    const none = followRequestLog(storage, { tail: 0 })
    expect(await none.read()).toEqual([])
    // Then the new ones, and nothing older.
    log.record('mine', { ...entry(300), key: 'sk_sandbox_mine…0000' })
    await log.flush()
    await log.close()
    expect(ids(await last.read())).toEqual(['req_300'])
    expect(ids(await mine.read())).toEqual(['req_300'])
    expect(ids(await none.read())).toEqual(['req_300'])
    expect(ids(await followRequestLog(storage, { tail: 1000 }).read())).toHaveLength(301)
  })

  it('gives a long log in batches as they are read, the same entries as a whole read', async () => {
    const storage = createStorage()
    const log = createRequestLog(storage)
    await writeBuckets(log, 0, 600)
    await log.close()
    const counted = countCalls(storage, 'getItems')
    const batches: string[][] = []
    const readsBefore: number[] = []
    for await (const batch of followRequestLog(counted.storage).readBatches()) {
      batches.push(ids(batch))
      readsBefore.push(counted.calls)
    }
    // The first batch comes after one read of the storage, not after all of them.
    expect(readsBefore).toEqual([1, 2, 3])
    expect(batches.map((batch) => batch.length)).toEqual([256, 256, 88])
    expect(batches.flat()).toEqual(ids(await followRequestLog(storage).read()))
  })

  it('finds a bucket the head never named at its next full listing', async () => {
    const storage = createStorage()
    const log = createRequestLog(storage)
    const follower = followRequestLog(storage, { readsPerListing: 3 })
    log.record('key-id', entry(0))
    await log.flush()
    expect(ids(await follower.read())).toEqual(['req_0'])
    // As a server killed between storing a bucket and its head leaves it.
    await storage.setItem('reqlog:999999999999999-000000-1', [{ ...entry(1), key_id: 'key-id' }])
    const reads = [await follower.read(), await follower.read(), await follower.read(), await follower.read()]
    expect(reads.map(ids)).toEqual([[], [], [], ['req_1']])
    await log.close()
  })
})

describe('request bodies for serve --log-bodies', () => {
  it('gives onRequest the body sent and the answer, byte for byte, and keeps neither in the stored log', async () => {
    const seen: RequestLogEntry[] = []
    api = await createTestApi({ logBodies: true, onRequest: (entry) => seen.push(entry) })
    const sent = '{ "action": "start_collateral_transfer", "collateral_btc": 0.05, "loan_amount": 2000 }'
    const started = await api.call('POST', '/api/sandbox/loans/flow', { rawBody: sent, idempotencyKey: 'idem-bodies-1' })
    const nowhere = await api.get('/api/sandbox/nowhere')
    await api.sandbox.flush()
    expect(seen[0]).toMatchObject({ request_id: started.body.request_id, request_body: sent })
    expect(JSON.parse(seen[0]!.response_body!)).toEqual(started.body)
    // A GET sends no body; a route-less answer still shows what it answered.
    expect(seen[1]!.request_body).toBeUndefined()
    expect(JSON.parse(seen[1]!.response_body!)).toEqual(nowhere.body)
    const stored = await readRequestLog(api.sandbox.storage, { apiKey: api.key })
    expect(stored).toHaveLength(2)
    expect(stored.some((entry) => 'request_body' in entry || 'response_body' in entry)).toBe(false)
  })

  it('gives none without logBodies', async () => {
    const seen: RequestLogEntry[] = []
    api = await createTestApi({ onRequest: (entry) => seen.push(entry) })
    await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' })
    expect(Object.keys(seen[0]!)).not.toContain('response_body')
    expect(Object.keys(seen[0]!)).not.toContain('request_body')
  })
})
