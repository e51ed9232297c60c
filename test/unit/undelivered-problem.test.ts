import { describe, expect, it } from 'vitest'
import { explainUndelivered, type DeliveryEntry } from '../../src/webhook-tools/wait-for-deliveries.js'

const entry = (id: string, status: DeliveryEntry['status'], fields: Partial<DeliveryEntry> = {}): DeliveryEntry => ({
  id, event_id: `evt_${id}`, event_type: 'sandbox.loan.issued', target: 'forward', url: 'http://127.0.0.1:3000/hooks', status, attempts: 1,
  next_attempt_at: null, last_status_code: null, last_error: null, created_at: '2026-11-26T00:00:00.000Z', updated_at: '2026-11-26T00:00:00.000Z', request_id: 'req_1', ...fields,
})

describe('explainUndelivered (the problem trigger --wait and retry --wait report)', () => {
  it('counts the undelivered among all waited for, with the wait to a tenth of a second, and names the first', () => {
    const deliveries = [entry('whd_a', 'delivered'), entry('whd_b', 'retrying', { last_error: 'ECONNREFUSED' }), entry('whd_c', 'failed')]
    expect(explainUndelivered(deliveries, 2000)).toBe(
      '2 of 3 not delivered after 2.0 s: the first, whd_b (sandbox.loan.issued to forward http://127.0.0.1:3000/hooks), is retrying (last answer: ECONNREFUSED); sandbox webhook deliveries shows how it ends',
    )
    expect(explainUndelivered([entry('whd_a', 'delivered')], 2000)).toBeNull()
  })
})
