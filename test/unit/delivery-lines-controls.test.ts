import { describe, expect, it } from 'vitest'
import { formatDelivery, formatEndpoint } from '../../src/cli/delivery-lines.js'
import type { DeliveryEntry } from '../../src/webhook-tools/wait-for-deliveries.js'

const ESCAPE = '\u001b]0;pwned\u0007\u009b2J'
const SHOWN = '\\u001b]0;pwned\\u0007\\u009b2J'
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/

describe('webhook deliveries lines from an answer holding control characters (a server at --base-url that is not this one)', () => {
  it('shows the event type of a delivery as escapes', () => {
    const delivery = {
      id: 'whd_1', event_id: 'evt_1', event_type: `sandbox.loan.issued${ESCAPE}`, target: 'endpoint', url: 'https://partner.example/hooks',
      status: 'delivered', attempts: 1, next_attempt_at: null, last_status_code: 200, last_error: null,
      created_at: '2026-11-26T00:00:00.000Z', updated_at: '2026-11-26T00:00:00.000Z', request_id: 'req_1',
    } as unknown as DeliveryEntry
    const line = formatDelivery(delivery, { requestId: true })
    expect(line).not.toMatch(CONTROLS)
    expect(line).toContain(`sandbox.loan.issued${SHOWN}`)
  })

  it('shows the endpoint\'s events and secret preview as escapes', () => {
    const endpoint = { id: 'we_1', url: 'https://partner.example/hooks', enabled: true, events: [`sandbox.loan.issued${ESCAPE}`], secretPreview: `whsec_...${ESCAPE}`, createdAt: '', updatedAt: '' }
    const line = formatEndpoint(endpoint as Parameters<typeof formatEndpoint>[0])
    expect(line).not.toMatch(CONTROLS)
    expect(line).toBe(`endpoint https://partner.example/hooks (enabled; sandbox.loan.issued${SHOWN}; secret whsec_...${SHOWN})`)
  })
})
