import { describe, expect, it } from 'vitest'
import { explainUndelivered, findBlocker, type DeliveryEntry } from '../../src/webhook-tools/wait-for-deliveries.js'

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
    expect(explainUndelivered([entry('whd_b', 'retrying', { last_status_code: 503, next_attempt_at: '2026-11-26T00:10:00.000Z' })], 500)).toBe(
      '1 of 1 not delivered after 0.5 s: the first, whd_b (sandbox.loan.issued to forward http://127.0.0.1:3000/hooks), is retrying (last answer: 503); its next attempt is at 2026-11-26T00:10:00.000Z; once the receiver answers 2xx, sandbox webhook retry whd_b sends it now',
    )
  })

  it('names the earlier retrying delivery to the same receiver that a pending one waits behind, and its retry', () => {
    const blocker = entry('whd_head', 'retrying', { event_type: 'sandbox.partner.updated', last_status_code: 503, next_attempt_at: '2026-11-26T00:10:00.000Z' })
    const mine = entry('whd_mine', 'pending', { attempts: 0 })
    // Newest first, as the API gives the log; an endpoint delivery retrying is another queue.
    const log = [mine, entry('whd_other', 'retrying', { target: 'endpoint', url: 'https://hooks.partner.example/x' }), entry('whd_between', 'pending'), blocker, entry('whd_old', 'delivered')]
    expect(findBlocker(mine, log)).toBe(blocker)
    expect(explainUndelivered([mine], 1500, log)).toBe(
      '1 of 1 not delivered after 1.5 s: the first, whd_mine (sandbox.loan.issued to forward http://127.0.0.1:3000/hooks), is pending behind whd_head (sandbox.partner.updated), '
      + 'an earlier delivery to the same receiver, retrying (last answer: 503; next attempt at 2026-11-26T00:10:00.000Z): deliveries to one receiver go in event order; '
      + 'sandbox webhook retry whd_head sends that one now, and the ones after it follow',
    )
  })

  it('finds no blocker for a delivery that is not pending, one behind no retrying delivery, or a log without targets', () => {
    const retrying = entry('whd_r', 'retrying')
    expect(findBlocker(entry('whd_mine', 'failed'), [entry('whd_mine', 'failed'), retrying])).toBeUndefined()
    // A retrying delivery newer than it is not ahead of it in the queue.
    expect(findBlocker(entry('whd_mine', 'pending'), [retrying, entry('whd_mine', 'pending')])).toBeUndefined()
    // A hosted server's log may show no target: no queue can be told from it.
    const untargeted = { ...entry('whd_mine', 'pending'), target: undefined } as unknown as DeliveryEntry
    expect(findBlocker(untargeted, [untargeted, { ...retrying, target: undefined } as unknown as DeliveryEntry])).toBeUndefined()
    expect(explainUndelivered([entry('whd_mine', 'pending')], 1000, [entry('whd_mine', 'pending')])).toBe(
      '1 of 1 not delivered after 1.0 s: the first, whd_mine (sandbox.loan.issued to forward http://127.0.0.1:3000/hooks), is pending; sandbox webhook deliveries shows how it ends',
    )
  })
})
