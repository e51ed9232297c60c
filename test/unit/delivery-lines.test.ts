import { describe, expect, it } from 'vitest'
import { formatDeliveries, formatDelivery, formatEndpoint } from '../../src/cli/delivery-lines.js'
import { EVENT_TYPES } from '../../src/webhooks/types.js'
import type { DeliveryEntry } from '../../src/webhook-tools/wait-for-deliveries.js'

const base: DeliveryEntry = {
  id: 'whd_1', event_id: 'evt_1', event_type: 'sandbox.loan.issued', target: 'forward', url: 'http://127.0.0.1:3000/hooks',
  status: 'delivered', attempts: 1, next_attempt_at: null, last_status_code: 200, last_error: null,
  created_at: '2026-11-26T00:00:00.000Z', updated_at: '2026-11-26T00:00:00.000Z', request_id: 'req_1',
}

describe('delivery lines (no colour off a terminal)', () => {
  it('shows each state with its last answer and attempts', () => {
    expect(formatDelivery(base)).toBe('  whd_1  sandbox.loan.issued               forward http://127.0.0.1:3000/hooks  ✓ delivered (200, 1 attempt)')
    expect(formatDelivery({ ...base, status: 'pending', attempts: 0, last_status_code: null })).toMatch(/  … pending$/)
    const retrying = formatDelivery({ ...base, status: 'retrying', attempts: 2, last_status_code: null, last_error: 'ECONNREFUSED\u001b[2J', next_attempt_at: '2026-11-26T00:00:05.000Z' })
    expect(retrying).toMatch(/  ✗ retrying \(ECONNREFUSED\\u001b\[2J, 2 attempts, next at \d\d:\d\d:05\)$/)
    expect(formatDelivery({ ...base, status: 'failed', attempts: 5, last_status_code: 500 })).toMatch(/  ✗ failed \(500, 5 attempts\)$/)
    // Put back by the retry endpoint: pending again, due now; "next at" belongs to a scheduled retry only.
    expect(formatDelivery({ ...base, status: 'pending', attempts: 2, last_status_code: 503, next_attempt_at: '2026-11-26T00:00:05.000Z' })).toMatch(/  … pending \(503, 2 attempts\)$/)
    // A log without target and URL (another server of this API) still reads.
    const { target: _t, url: _u, ...bare } = base
    expect(formatDelivery(bare as DeliveryEntry)).toBe('  whd_1  sandbox.loan.issued               ✓ delivered (200, 1 attempt)')
  })

  it('ends the line with the request that queued the delivery when asked, and only when the log has one', () => {
    expect(formatDelivery(base, { requestId: true })).toBe('  whd_1  sandbox.loan.issued               forward http://127.0.0.1:3000/hooks  ✓ delivered (200, 1 attempt)  req_1')
    expect(formatDelivery({ ...base, request_id: null }, { requestId: true })).toBe(formatDelivery(base))
  })

  it('heads a list with the wait, and hints at --wait while some are still going', () => {
    expect(formatDeliveries([], null, 'deliveries queued')).toEqual([])
    expect(formatDeliveries([base], 1234, 'retried 1 delivery')[0]).toBe('retried 1 delivery, after 1.2 s:')
    expect(formatDeliveries([{ ...base, status: 'pending' }], null, 'deliveries queued').at(-1)).toBe('  (--wait waits for their outcome; sandbox webhook deliveries shows it later)')
    expect(formatDeliveries([base, { ...base, status: 'retrying' }], null, 'deliveries queued').at(-1)).toBe('  (--wait waits for their outcome; sandbox webhook deliveries shows it later)')
    expect(formatDeliveries([base], null, 'deliveries queued')).toHaveLength(2)
  })

  it('shows the endpoint, or how to register one', () => {
    const endpoint = { id: 'we_1', url: 'https://partner.example/hooks', enabled: false, events: ['sandbox.loan.issued' as const], secretPreview: 'whsec_...abcd', createdAt: '', updatedAt: '' }
    expect(formatEndpoint(endpoint)).toBe('endpoint https://partner.example/hooks (disabled; sandbox.loan.issued; secret whsec_...abcd)')
    expect(formatEndpoint({ ...endpoint, enabled: true, events: [...EVENT_TYPES] })).toBe('endpoint https://partner.example/hooks (enabled; every event; secret whsec_...abcd)')
    expect(formatEndpoint(null)).toMatch(/^no endpoint \(POST \/api\/sandbox\/webhooks registers one\)/)
  })
})
