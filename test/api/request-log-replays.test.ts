import { describe, expect, it } from 'vitest'
import { createTestApi, LOAN } from '../helpers/api.js'
import type { RequestLogEntry } from '../../src/server/request-log.js'

describe('the request log of a retried POST', () => {
  it('marks the replayed answers, so serve\'s lines and sandbox logs tell the one request that ran from its retries', async () => {
    const seen: RequestLogEntry[] = []
    const api = await createTestApi({ onRequest: (entry) => seen.push(entry) })
    const first = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'create-1' })
    const retry = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'create-1' })
    // A stored 409 is replayed too: the retry of a refused step did not run again either.
    const refused = await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }, { idempotencyKey: 'kyt-1' })
    const refusedAgain = await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }, { idempotencyKey: 'kyt-1' })
    expect([first.status, retry.status, refused.status, refusedAgain.status]).toEqual([200, 200, 409, 409])
    const byId = (id: string) => seen.find((entry) => entry.request_id === id)
    expect(byId(first.body.request_id)).not.toHaveProperty('idempotency_replayed')
    expect(byId(retry.body.request_id)).toMatchObject({ status: 200, idempotency_key: 'create-1', idempotency_replayed: true })
    expect(byId(refused.body.request_id)).not.toHaveProperty('idempotency_replayed')
    expect(byId(refusedAgain.body.request_id)).toMatchObject({ status: 409, error_code: 'FLOW_CONFLICT', idempotency_replayed: true })
    await api.sandbox.close()
  })
})
