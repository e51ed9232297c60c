import { afterEach, describe, expect, it } from 'vitest'
import { readRequestLog } from '../../src/server/request-log.js'
import { createTestApi, newKey, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

describe('request log', () => {
  it('logs each authenticated request per key with request_id, status, error_code and Idempotency-Key', async () => {
    const seen: string[] = []
    api = await createTestApi({ onRequest: (entry) => seen.push(entry.request_id) })
    const ok = await api.get('/api/sandbox/config')
    const refused = await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }, { idempotencyKey: 'idem-log-1' })
    await api.get('/api/sandbox/config', newKey('other'))
    await api.call('GET', '/api/sandbox/config', { key: null })
    await api.sandbox.flush()

    const mine = await readRequestLog(api.sandbox.storage, { apiKey: api.key })
    expect(mine.map((entry) => [entry.request_id, entry.method, entry.path, entry.status, entry.error_code, entry.idempotency_key])).toEqual([
      [ok.body.request_id, 'GET', '/api/sandbox/config', 200, null, null],
      [refused.body.request_id, 'POST', '/api/sandbox/loans/flow', 409, 'FLOW_CONFLICT', 'idem-log-1'],
    ])
    expect(mine[0]!.key).not.toContain(api.key.slice(12))
    expect(mine[0]!.duration_ms).toBeGreaterThanOrEqual(0)
    expect(await readRequestLog(api.sandbox.storage)).toHaveLength(3)
    expect(seen).toHaveLength(4)
  })
})
