import { describe, expect, it } from 'vitest'
import { computeSignature, verifyWebhook, WebhookVerificationError } from '../../src/webhooks/signature.js'
import { EVENT_TYPES } from '../../src/webhooks/types.js'
import { buildSampleEvents } from '../../src/webhook-tools/sample-events.js'
import { buildVerifyBattery, type SignedDelivery } from '../../src/webhook-tools/verify-battery.js'

const SECRET = 'whsec_battery_test_secret'
const NOW = 1_800_000_000

function verdict(item: SignedDelivery, now = NOW): string {
  try {
    verifyWebhook({ secret: SECRET, body: item.body, headers: item.headers, now })
    return 'valid'
  } catch (error) {
    return (error as WebhookVerificationError).code
  }
}

describe('webhook verify battery', () => {
  const events = buildSampleEvents(new Date(NOW * 1000))
  const battery = buildVerifyBattery(SECRET, events)
  const byName = Object.fromEntries(battery.map((item) => [item.name, item]))

  it('uses real events of every type, built by the server domain', () => {
    expect(new Set(events.map((event) => event.type))).toEqual(new Set(EVENT_TYPES))
    const issued = events.find((event) => event.type === 'sandbox.loan.issued')!
    expect(issued).toMatchObject({ api_version: '0.3.0', id: expect.stringMatching(/^evt_/), data: { object: { status: 'active', debt: 20000, id: expect.stringMatching(/^loan_/) } } })
    expect(events.find((event) => event.type === 'sandbox.collateral.returned')!.data.object).toMatchObject({ status: 'closed' })
  })

  it('signs the good cases correctly and breaks each bad case in exactly the named way', () => {
    for (const item of battery.filter((item) => item.expect === '2xx')) expect(verdict(item.sign(NOW)), item.name).toBe('valid')
    expect(verdict(byName['wrong signature']!.sign(NOW))).toBe('signature_mismatch')
    expect(verdict(byName['tampered body']!.sign(NOW))).toBe('signature_mismatch')
    expect(verdict(byName['missing signature header']!.sign(NOW))).toBe('missing_header')
    for (const [name, signedTimestamp] of [['missing timestamp header (".body" signed)', ''], ['missing timestamp header (send time signed)', NOW]] as const) {
      const item = byName[name]!.sign(NOW)
      expect(verdict(item), name).toBe('missing_header')
      expect(item.headers, name).not.toHaveProperty('x-service-webhook-timestamp')
      expect(item.headers['x-service-webhook-signature'], name).toBe(`v1=${computeSignature(SECRET, signedTimestamp, item.body)}`)
    }
    expect(verdict(byName['stale timestamp']!.sign(NOW))).toBe('timestamp_too_old')
    expect(verdict(byName['future timestamp']!.sign(NOW))).toBe('timestamp_too_new')
    expect(verdict(byName['malformed v1= value']!.sign(NOW))).toBe('malformed_signature')
    for (const name of ['empty v1= value', 'truncated v1= value (lowercase prefix)', 'wrong scheme label (v0=)']) {
      expect(verdict(byName[name]!.sign(NOW)), name).toBe('malformed_signature')
    }
  })

  it('sends one partner update in bytes that no re-serialization of its parsed body gives back', () => {
    const indented = byName['signed sandbox.partner.updated (indented JSON)']!.sign(NOW)
    expect(verdict(indented)).toBe('valid')
    const event = JSON.parse(indented.body)
    expect(event).toMatchObject({ type: 'sandbox.partner.updated', data: { object: { name: 'Exämple Partner — 東京' } } })
    expect(indented.body).toBe(`${JSON.stringify(event, null, 2)}\n`)
    // Its own event id: a receiver deduplicating by id processes it rather than skipping it unchecked.
    expect(events.map((item) => item.id)).not.toContain(event.id)
    // What a receiver behind express.json() (JSON.stringify(req.body)) or Python's json.dumps checks instead.
    for (const reserialized of [JSON.stringify(event), JSON.stringify(event, null, 2)]) {
      expect(verdict({ body: reserialized, headers: indented.headers })).toBe('signature_mismatch')
    }
  })

  it('sends each bad case as its report line says', () => {
    // "v1=<the right hex, truncated and upper-cased>"
    const malformed = byName['malformed v1= value']!.sign(NOW)
    expect(malformed.headers['x-service-webhook-signature']).toBe(`v1=${computeSignature(SECRET, NOW, malformed.body).slice(0, 40).toUpperCase()}`)
    // "v1= (nothing after it)", "v1=<the first 32 of the 64 right hex characters>", "v0=<the right hex>":
    // lowercase, so a receiver that compares by prefix or ignores the label sees what it accepts.
    expect(byName['empty v1= value']!.sign(NOW).headers['x-service-webhook-signature']).toBe('v1=')
    const truncated = byName['truncated v1= value (lowercase prefix)']!.sign(NOW)
    expect(truncated.headers['x-service-webhook-signature']).toBe(`v1=${computeSignature(SECRET, NOW, truncated.body).slice(0, 32)}`)
    const relabelled = byName['wrong scheme label (v0=)']!.sign(NOW)
    expect(relabelled.headers['x-service-webhook-signature']).toBe(`v0=${computeSignature(SECRET, NOW, relabelled.body)}`)
    // "the body changed after signing (debt set to 1)": a loan event, so there is a debt to change.
    const tampered = JSON.parse(byName['tampered body']!.sign(NOW).body)
    expect(tampered).toMatchObject({ type: 'sandbox.loan.issued', data: { object: { debt: 1 } } })
  })

  it('takes each timestamp when the case is signed; stale and future keep their offset from that time', () => {
    // An hour after the battery was built: every good case must still be fresh then.
    const later = NOW + 3600
    for (const item of battery.filter((item) => item.expect === '2xx')) {
      const delivery = item.sign(later)
      expect(verdict(delivery, later), item.name).toBe('valid')
      expect(Number(delivery.headers['x-service-webhook-timestamp']) - later, item.name).toBe(item.name.startsWith('redelivery') ? 1 : 0)
    }
    expect(byName['stale timestamp']!.sign(later).headers['x-service-webhook-timestamp']).toBe(String(later - 600))
    expect(byName['future timestamp']!.sign(later).headers['x-service-webhook-timestamp']).toBe(String(later + 600))
    expect(byName['missing timestamp header (send time signed)']!.sign(later).headers['x-service-webhook-signature']).toBe(
      `v1=${computeSignature(SECRET, later, byName['missing timestamp header (send time signed)']!.sign(later).body)}`,
    )
    // Same bytes and ids whenever signed: only the timestamp and signature move.
    expect(battery.map((item) => item.sign(later).body)).toEqual(battery.map((item) => item.sign(NOW).body))
  })

  it('ends with a redelivery of the first event, and bad cases never reuse an accepted id', () => {
    const redelivery = battery.at(-1)!
    expect(redelivery).toMatchObject({ name: 'redelivery of an accepted event', expect: '2xx' })
    const again = redelivery.sign(NOW)
    const first = battery[0]!.sign(NOW)
    expect(again.headers['x-service-webhook-id']).toBe(events[0]!.id)
    expect(again.body).toBe(first.body)
    expect(again.headers['x-service-webhook-timestamp']).not.toBe(first.headers['x-service-webhook-timestamp'])
    const accepted = new Set(events.map((event) => event.id))
    for (const item of battery.filter((item) => item.expect === 'non-2xx')) expect(accepted.has(JSON.parse(item.sign(NOW).body).id)).toBe(false)
    expect(battery.filter((item) => item.expect === 'non-2xx').map((item) => item.name)).toEqual([
      'wrong signature', 'tampered body', 'missing signature header',
      'missing timestamp header (".body" signed)', 'missing timestamp header (send time signed)', 'stale timestamp',
      'future timestamp', 'malformed v1= value', 'empty v1= value', 'truncated v1= value (lowercase prefix)',
      'wrong scheme label (v0=)',
    ])
  })
})
