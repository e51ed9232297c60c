import type { SandboxEvent } from '../domain/types.js'
import { createId } from '../server/ids.js'
import { computeSignature, DEFAULT_TOLERANCE_SECONDS, signWebhook } from '../webhooks/signature.js'

/** The bytes and headers of one delivery, as sent. */
export interface SignedDelivery {
  body: string
  headers: Record<string, string>
}

/** One delivery of the battery and the answer a safe receiver gives it. */
export interface VerifyCase {
  name: string
  /** What was sent, in a few words, for the report. */
  sent: string
  expect: '2xx' | 'non-2xx'
  /**
   * Signs the delivery as sent at `nowSeconds` (unix seconds). Called just before sending: a case
   * signed when the battery was built would reach a slow receiver stale, and be refused for that.
   */
  sign(nowSeconds: number): SignedDelivery
}

const SKEW_SECONDS = DEFAULT_TOLERANCE_SECONDS + 300

function signed(secret: string, event: SandboxEvent, timestamp: number, body = JSON.stringify(event)): SignedDelivery {
  return { body, headers: signWebhook({ secret, body, eventId: event.id, eventType: event.type, timestamp }).headers }
}

/** A copy of an event under a fresh id, so bad cases never reuse an id the receiver accepted. */
function fresh(event: SandboxEvent): SandboxEvent {
  return { ...event, id: createId('evt') }
}

function withoutHeader(delivery: SignedDelivery, name: string): SignedDelivery {
  const { [name]: _dropped, ...headers } = delivery.headers
  return { body: delivery.body, headers }
}

function withSignature(delivery: SignedDelivery, value: string): SignedDelivery {
  return { body: delivery.body, headers: { ...delivery.headers, 'x-service-webhook-signature': value } }
}

/** The forged and broken cases, each on a fresh copy of `sample`. */
function buildBadCases(secret: string, sample: SandboxEvent): VerifyCase[] {
  const bad = (name: string, sent: string, sign: (now: number) => SignedDelivery): VerifyCase => ({ name, sent, expect: 'non-2xx', sign })
  const [wrongSecret, tampered, unsigned, emptyStamp, clockStamp, stale, future, malformed] = Array.from({ length: 8 }, () => fresh(sample))
  const [emptyValue, prefix, wrongScheme] = Array.from({ length: 3 }, () => fresh(sample))
  const changed = JSON.stringify({ ...tampered!, data: { object: { ...(tampered!.data.object as object), debt: 1 } } })
  return [
    bad('wrong signature', 'signed with another secret', (now) => signed(`${secret}_not`, wrongSecret!, now)),
    bad('tampered body', 'the body changed after signing (debt set to 1)', (now) => ({ body: changed, headers: signed(secret, tampered!, now).headers })),
    bad('missing signature header', 'no x-service-webhook-signature header', (now) => withoutHeader(signed(secret, unsigned!, now), 'x-service-webhook-signature')),
    // The timestamp is half of what is signed and the only defence against replay, so a receiver
    // must require it. Two ways a lax one gets past its absence: signing an empty timestamp
    // (`"." + body`, what `${header ?? ''}.${body}` computes) and putting its own clock in its place.
    bad('missing timestamp header (".body" signed)', 'no x-service-webhook-timestamp header; signature over "." + body, an empty timestamp', (now) => {
      const delivery = withoutHeader(signed(secret, emptyStamp!, now), 'x-service-webhook-timestamp')
      return { body: delivery.body, headers: { ...delivery.headers, 'x-service-webhook-signature': `v1=${computeSignature(secret, '', delivery.body)}` } }
    }),
    bad('missing timestamp header (send time signed)', 'no x-service-webhook-timestamp header; signature over "<send time>." + body', (now) => withoutHeader(signed(secret, clockStamp!, now), 'x-service-webhook-timestamp')),
    // Offsets from the send time, not from when the battery was built: what the receiver sees is then
    // exactly this far off its clock however long the earlier cases took.
    bad('stale timestamp', `correctly signed, timestamp ${SKEW_SECONDS} s in the past`, (now) => signed(secret, stale!, now - SKEW_SECONDS)),
    bad('future timestamp', `correctly signed, timestamp ${SKEW_SECONDS} s ahead`, (now) => signed(secret, future!, now + SKEW_SECONDS)),
    bad('malformed v1= value', 'x-service-webhook-signature: v1=<the right hex, truncated and upper-cased>', (now) => {
      const delivery = signed(secret, malformed!, now)
      const hex = computeSignature(secret, now, delivery.body)
      return { body: delivery.body, headers: { ...delivery.headers, 'x-service-webhook-signature': `v1=${hex.slice(0, 40).toUpperCase()}` } }
    }),
    // Lenient comparisons the upper-cased value above cannot catch. A receiver testing
    // `expected.startsWith(received)` (or looping over the received length) accepts any prefix of
    // the right hex, the empty one included, and an attacker needs no secret to send that.
    bad('empty v1= value', 'x-service-webhook-signature: v1= (nothing after it), current timestamp', (now) => withSignature(signed(secret, emptyValue!, now), 'v1=')),
    bad('truncated v1= value (lowercase prefix)', 'x-service-webhook-signature: v1=<the first 32 of the 64 right hex characters>', (now) => {
      const delivery = signed(secret, prefix!, now)
      return withSignature(delivery, `v1=${computeSignature(secret, now, delivery.body).slice(0, 32)}`)
    }),
    // Only `v1=` values count (README: accept if any `v1=` value matches). The right hex under
    // another label catches a receiver that takes whatever follows the `=`, and one that requires
    // every `v1=` entry to match, which holds vacuously when there is none.
    bad('wrong scheme label (v0=)', 'x-service-webhook-signature: v0=<the right hex>, no v1= value', (now) => {
      const delivery = signed(secret, wrongScheme!, now)
      return withSignature(delivery, `v0=${computeSignature(secret, now, delivery.body)}`)
    }),
  ]
}

/**
 * decisions.md's battery, and three signature values a lenient comparison accepts: every event
 * type correctly signed, and a partner update written as indented JSON, then a wrong signature, a tampered body, a missing signature header, a
 * missing timestamp header (two ways), a stale and a future timestamp, a malformed `v1=` value, an
 * empty one, a truncated lowercase one, the right hex labelled `v0=`, and last a redelivery of
 * an accepted event (same id, fresh timestamp and signature). Bodies and ids are fixed here; each
 * case is signed by its `sign`.
 */
export function buildVerifyBattery(secret: string, events: SandboxEvent[]): VerifyCase[] {
  const cases: VerifyCase[] = events.map((event) => ({
    name: `signed ${event.type}`,
    sent: `a correctly signed ${event.type} (${event.id})`,
    expect: '2xx',
    sign: (now) => signed(secret, event, now),
  }))
  // The sandbox writes its bodies with JSON.stringify, so a receiver that verifies
  // JSON.stringify(JSON.parse(body)) (behind express.json(), say) passes every one of them, and
  // then refuses every delivery of a sender that writes JSON otherwise. Indented with a final
  // newline, and with the non-ASCII partner name, no usual re-serialization gives these bytes back.
  const partner = fresh(events.find((event) => event.type === 'sandbox.partner.updated') ?? events[0]!)
  cases.push({
    name: `signed ${partner.type} (indented JSON)`,
    sent: `a correctly signed ${partner.type} (${partner.id}) written as indented JSON with a final newline, as other senders may write it: verify the bytes as received`,
    expect: '2xx',
    sign: (now) => signed(secret, partner, now, `${JSON.stringify(partner, null, 2)}\n`),
  })
  const sample = events.find((event) => event.type === 'sandbox.loan.issued') ?? events[0]!
  cases.push(...buildBadCases(secret, sample))
  const first = events[0]!
  // One second ahead, so its timestamp and signature differ from the first delivery's even when the
  // whole battery is sent within one second.
  cases.push({ name: 'redelivery of an accepted event', sent: `${first.id} again, fresh timestamp and signature`, expect: '2xx', sign: (now) => signed(secret, first, now + 1) })
  return cases
}
