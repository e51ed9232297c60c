import { describe, expect, it } from 'vitest'
import { constructWebhookEvent } from '../../src/webhooks/construct-event.js'
import { signWebhook, WebhookVerificationError } from '../../src/webhooks/signature.js'

const secret = 'whsec_construct_event_test_secret'
const event = { id: 'evt_1', type: 'sandbox.partner.updated', created_at: '2026-11-26T00:00:00.000Z', api_version: '0.3.0', data: { object: { id: 'ptr_1', name: 'Acme' } } }

/** A delivery as the sandbox signs it, with the headers naming `eventId` and `eventType`. */
function deliver(body: string, eventId = 'evt_1', eventType = 'sandbox.partner.updated') {
  return { secret, body, headers: signWebhook({ secret, body, eventId, eventType }).headers }
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run()
  } catch (error) {
    return error instanceof WebhookVerificationError ? error.code : `not a WebhookVerificationError: ${error}`
  }
  return undefined
}

describe('constructWebhookEvent', () => {
  it('returns the verified body as the event, narrowed by its type', () => {
    const parsed = constructWebhookEvent(deliver(JSON.stringify(event)))
    expect(parsed).toEqual(event)
    if (parsed.type !== 'sandbox.partner.updated') throw new Error(parsed.type)
    expect(parsed.data.object.name).toBe('Acme')
  })

  it('takes the body as bytes too (express.raw(), a fetch request\'s arrayBuffer()), decoded as UTF-8', () => {
    const text = JSON.stringify({ ...event, data: { object: { id: 'ptr_1', name: 'Ænima ✓' } } })
    const { headers } = deliver(text)
    const bytes = Buffer.from(text, 'utf8')
    for (const body of [bytes, new Uint8Array(bytes), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)]) {
      const parsed = constructWebhookEvent({ secret, body, headers })
      if (parsed.type !== 'sandbox.partner.updated') throw new Error(parsed.type)
      expect(parsed.data.object.name).toBe('Ænima ✓')
    }
  })

  it('refuses what verifyWebhook refuses, before parsing', () => {
    const delivery = deliver(JSON.stringify(event))
    expect(codeOf(() => constructWebhookEvent({ ...delivery, body: delivery.body.replace('Acme', 'Acne') }))).toBe('signature_mismatch')
    expect(codeOf(() => constructWebhookEvent({ ...delivery, secret: 'whsec_other_secret_entirely' }))).toBe('signature_mismatch')
  })

  it('names itself in the TypeError for a secret or headers not given, not verifyWebhook, which the receiver never called', () => {
    // The README's receiver passes process.env.WEBHOOK_SECRET!: unset, it was told that verifyWebhook needs a secret.
    const delivery = deliver(JSON.stringify(event))
    expect(() => constructWebhookEvent({ ...delivery, secret: undefined as unknown as string }))
      .toThrow(new TypeError('constructWebhookEvent needs a signing secret (or a list of them), none empty'))
    expect(() => constructWebhookEvent({ ...delivery, headers: undefined as unknown as Headers }))
      .toThrow(new TypeError('constructWebhookEvent needs the request\'s headers (a Headers, or a record such as Node\'s request.headers), not undefined'))
  })

  it('refuses a signed body that is not an event object', () => {
    for (const body of ['not json', '[]', 'null', '{"id":"evt_1","type":"sandbox.partner.updated"}']) {
      expect(codeOf(() => constructWebhookEvent(deliver(body))), body).toBe('malformed_body')
    }
  })

  it('refuses headers that name another event than the signed body (a replayed body under a fresh id)', () => {
    const body = JSON.stringify(event)
    expect(codeOf(() => constructWebhookEvent(deliver(body, 'evt_2')))).toBe('header_mismatch')
    expect(codeOf(() => constructWebhookEvent(deliver(body, 'evt_1', 'sandbox.loan.issued')))).toBe('header_mismatch')
  })
})
