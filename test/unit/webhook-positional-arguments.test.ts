import { describe, expect, it } from 'vitest'
import { constructWebhookEvent } from '../../src/webhooks/construct-event.js'
import { signWebhook, verifyWebhook } from '../../src/webhooks/signature.js'

// Stripe's constructEvent(body, signature, secret) takes three arguments; these take one object.
// Called the Stripe way from JavaScript, they said the secret was not set, which sent a partner
// looking at an environment variable that was fine.
const secret = 'whsec_positional_arguments_secret'
const body = JSON.stringify({ id: 'evt_1', type: 'sandbox.webhook.test', created_at: '2026-11-26T00:00:00.000Z', api_version: '0.3.0', data: { object: {} } })
const { headers } = signWebhook({ secret, body, eventId: 'evt_1', eventType: 'sandbox.webhook.test' })
type Loose = (...args: unknown[]) => unknown

describe('a webhook helper called with positional arguments', () => {
  it('says it takes one object, for constructWebhookEvent and verifyWebhook alike', () => {
    expect(() => (constructWebhookEvent as Loose)(body, headers, secret)).toThrow(new TypeError(
      'constructWebhookEvent takes one object, { secret, body, headers }, not the arguments of Stripe\'s constructEvent(body, signature, secret): constructWebhookEvent({ secret, body: rawBody, headers: request.headers })',
    ))
    expect(() => (verifyWebhook as Loose)(Buffer.from(body), headers, secret)).toThrow(/^verifyWebhook takes one object, \{ secret, body, headers \}/)
    expect(() => (verifyWebhook as Loose)({ secret, body, headers }, secret)).toThrow(/^verifyWebhook takes one object/)
  })

  it('still verifies the one object', () => {
    expect(verifyWebhook({ secret, body, headers }).eventId).toBe('evt_1')
    expect(constructWebhookEvent({ secret, body, headers }).id).toBe('evt_1')
  })
})
