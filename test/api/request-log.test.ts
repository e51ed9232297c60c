import { afterEach, describe, expect, it } from 'vitest'
import { createStorage } from 'unstorage'
import { createRequestLog, readRequestLog, readRequestLogSince, type RequestLogEntry } from '../../src/server/request-log.js'
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
    } finally {
      clock.restore()
    }
  })
})

describe('following the request log (sandbox logs --follow)', () => {
  it('prints each request once, and holds no more than the log holds however long it follows', async () => {
    const storage = createStorage()
    const log = createRequestLog(storage, { limit: 5 })
    const seen = new Set<string>()
    const printed: string[] = []
    const entry = (n: number): RequestLogEntry => ({ request_id: `req_${n}`, at: new Date(0).toISOString(), key: null, method: 'GET', path: '/api/sandbox/config', status: 200, error_code: null, idempotency_key: null, duration_ms: 0 })
    // A server busy for a long while: one bucket a flush, the oldest rolling off past 5 entries.
    for (let n = 0; n < 200; n++) {
      log.record('key-id', entry(n))
      await log.flush()
      printed.push(...(await readRequestLogSince(storage, { seen })).map((read) => read.request_id))
    }
    await log.close()
    expect(printed).toEqual(Array.from({ length: 200 }, (_, n) => `req_${n}`))
    expect(seen.size).toBeLessThanOrEqual(5)
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
