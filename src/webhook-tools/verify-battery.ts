import type { SandboxEvent } from '../domain/types.js'
import { createId } from '../server/ids.js'
import { computeSignature, DEFAULT_TOLERANCE_SECONDS, signWebhook } from '../webhooks/signature.js'

/** One delivery of the battery and the answer a safe receiver gives it. */
export interface VerifyCase {
  name: string
  /** What was sent, in a few words, for the report. */
  sent: string
  expect: '2xx' | 'non-2xx'
  body: string
  headers: Record<string, string>
}

const SKEW_SECONDS = DEFAULT_TOLERANCE_SECONDS + 300

function signed(secret: string, event: SandboxEvent, timestamp: number, body = JSON.stringify(event)) {
  return { body, headers: signWebhook({ secret, body, eventId: event.id, eventType: event.type, timestamp }).headers }
}

/** A copy of an event under a fresh id, so bad cases never reuse an id the receiver accepted. */
function fresh(event: SandboxEvent): SandboxEvent {
  return { ...event, id: createId('evt') }
}

/**
 * decisions.md's battery: every event type correctly signed, then a wrong signature, a tampered
 * body, a missing signature header, a missing timestamp header (two ways), a stale and a future
 * timestamp, a malformed `v1=` value, and last a redelivery of an accepted event (same id, fresh
 * timestamp and signature).
 */
export function buildVerifyBattery(secret: string, events: SandboxEvent[], nowSeconds = Math.floor(Date.now() / 1000)): VerifyCase[] {
  const cases: VerifyCase[] = events.map((event) => ({
    name: `signed ${event.type}`,
    sent: `a correctly signed ${event.type} (${event.id})`,
    expect: '2xx',
    ...signed(secret, event, nowSeconds),
  }))
  const sample = events.find((event) => event.type === 'sandbox.loan.issued') ?? events[0]!
  const wrongSecret = fresh(sample)
  cases.push({ name: 'wrong signature', sent: 'signed with another secret', expect: 'non-2xx', ...signed(`${secret}_not`, wrongSecret, nowSeconds) })
  const tampered = fresh(sample)
  const original = signed(secret, tampered, nowSeconds)
  const changed = JSON.stringify({ ...tampered, data: { object: { ...(tampered.data.object as object), debt: 1 } } })
  cases.push({ name: 'tampered body', sent: 'the body changed after signing (debt set to 1)', expect: 'non-2xx', body: changed, headers: original.headers })
  const unsigned = signed(secret, fresh(sample), nowSeconds)
  const { 'x-service-webhook-signature': _dropped, ...withoutSignature } = unsigned.headers
  cases.push({ name: 'missing signature header', sent: 'no x-service-webhook-signature header', expect: 'non-2xx', body: unsigned.body, headers: withoutSignature })
  // The timestamp is half of what is signed and the only defence against replay, so a receiver must
  // require it. Two ways a lax one gets past its absence: signing an empty timestamp (`"." + body`,
  // what `${header ?? ''}.${body}` computes) and putting its own clock in its place.
  const emptyStamp = signed(secret, fresh(sample), nowSeconds)
  const { 'x-service-webhook-timestamp': _noStamp, ...withoutTimestamp } = emptyStamp.headers
  cases.push({
    name: 'missing timestamp header (".body" signed)',
    sent: 'no x-service-webhook-timestamp header; signature over "." + body, an empty timestamp',
    expect: 'non-2xx',
    body: emptyStamp.body,
    headers: { ...withoutTimestamp, 'x-service-webhook-signature': `v1=${computeSignature(secret, '', emptyStamp.body)}` },
  })
  const clockStamp = signed(secret, fresh(sample), nowSeconds)
  const { 'x-service-webhook-timestamp': _alsoNoStamp, ...clockHeaders } = clockStamp.headers
  cases.push({
    name: 'missing timestamp header (send time signed)',
    sent: 'no x-service-webhook-timestamp header; signature over "<send time>." + body',
    expect: 'non-2xx',
    body: clockStamp.body,
    headers: clockHeaders,
  })
  cases.push({ name: 'stale timestamp', sent: `correctly signed, timestamp ${SKEW_SECONDS} s in the past`, expect: 'non-2xx', ...signed(secret, fresh(sample), nowSeconds - SKEW_SECONDS) })
  cases.push({ name: 'future timestamp', sent: `correctly signed, timestamp ${SKEW_SECONDS} s ahead`, expect: 'non-2xx', ...signed(secret, fresh(sample), nowSeconds + SKEW_SECONDS) })
  const malformed = signed(secret, fresh(sample), nowSeconds)
  const hex = computeSignature(secret, nowSeconds, malformed.body)
  cases.push({
    name: 'malformed v1= value',
    sent: 'x-service-webhook-signature: v1=<the right hex, truncated and upper-cased>',
    expect: 'non-2xx',
    body: malformed.body,
    headers: { ...malformed.headers, 'x-service-webhook-signature': `v1=${hex.slice(0, 40).toUpperCase()}` },
  })
  const first = events[0]!
  cases.push({ name: 'redelivery of an accepted event', sent: `${first.id} again, fresh timestamp and signature`, expect: '2xx', ...signed(secret, first, nowSeconds + 1) })
  return cases
}
