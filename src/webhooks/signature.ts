import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { readWebhookBody, type WebhookBody } from './raw-body.js'
import { checkSingleInput, checkVerifyOptions, readSecrets } from './verify-input.js'
import { isSecretPreview } from '../text/secret-preview.js'

/** Default tolerance between a delivery's timestamp and the receiver's clock, both ways. */
export const DEFAULT_TOLERANCE_SECONDS = 300

/** Why a delivery failed verification. */
export type WebhookVerificationCode =
  | 'missing_header'
  | 'malformed_signature'
  | 'malformed_timestamp'
  | 'signature_mismatch'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  /** constructWebhookEvent only: a signed body that is not an event's JSON object. */
  | 'malformed_body'
  /** constructWebhookEvent only: the id or event header names another event than the signed body. */
  | 'header_mismatch'

/** A delivery that must be refused, with the reason as a code. */
export class WebhookVerificationError extends Error {
  readonly code: WebhookVerificationCode

  constructor(code: WebhookVerificationCode, message: string) {
    super(message)
    this.name = 'WebhookVerificationError'
    this.code = code
  }
}

/** A new signing secret: `whsec_` + 32 random bytes, base64url. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`
}

/** What the API shows instead of a secret: `whsec_...` + its last 4 characters. */
export function previewSecret(secret: string): string {
  return `whsec_...${secret.slice(-4)}`
}

/** HMAC-SHA256 of `<timestamp>.<body>` keyed with the whole secret string, lowercase hex; a text body counts as its UTF-8 bytes. */
export function computeSignature(secret: string, timestamp: number | string, body: string | Uint8Array): string {
  const hmac = createHmac('sha256', secret).update(`${timestamp}.`, 'utf8')
  return (typeof body === 'string' ? hmac.update(body, 'utf8') : hmac.update(body)).digest('hex')
}

/** Signs a delivery: the four `x-service-webhook-*` headers for exactly these body bytes. */
export function signWebhook(input: { secret: string; body: string; eventId: string; eventType: string; timestamp?: number | undefined }): { headers: Record<string, string>; signature: string } {
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000)
  const signature = computeSignature(input.secret, timestamp, input.body)
  return {
    signature,
    headers: {
      'x-service-webhook-id': input.eventId,
      'x-service-webhook-event': input.eventType,
      'x-service-webhook-timestamp': String(timestamp),
      'x-service-webhook-signature': `v1=${signature}`,
    },
  }
}

/** Request headers as a fetch `Headers` or a Node `IncomingHttpHeaders`-like record. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>

function readHeader(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const record = headers as Record<string, string | string[] | undefined>
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? value[0] : value
}

/**
 * Verifies a delivery as a receiver should: all headers present, a `v1=` signature over
 * `<timestamp>.<rawBody>` matching in constant time, and a timestamp within the tolerance both
 * ways. `secret` may list several: while a rotation (`rotate_secret: true`, which takes effect at
 * once) reaches the receiver's configuration, it accepts the old and the new one. Returns what was
 * verified; throws WebhookVerificationError otherwise.
 */
export function verifyWebhook(input: { secret: string | readonly string[]; body: WebhookBody; headers: HeaderSource; toleranceSeconds?: number | undefined; now?: number | undefined }): { eventId: string; eventType: string; timestamp: number } {
  checkSingleInput('verifyWebhook', input, arguments.length)
  return verifyDelivery(input, 'verifyWebhook')
}

/** verifyWebhook, its TypeErrors naming CALLER: the function the receiver called (constructWebhookEvent too). */
export function verifyDelivery(input: Parameters<typeof verifyWebhook>[0], caller: string): ReturnType<typeof verifyWebhook> {
  // Configuration mistakes, not forged deliveries: no code of WebhookVerificationError fits.
  const secrets = readSecrets(input.secret, caller)
  checkVerifyOptions(input, caller)
  const body = readWebhookBody(input.body)
  const eventId = readHeader(input.headers, 'x-service-webhook-id')
  const eventType = readHeader(input.headers, 'x-service-webhook-event')
  const timestampText = readHeader(input.headers, 'x-service-webhook-timestamp')
  const signatureHeader = readHeader(input.headers, 'x-service-webhook-signature')
  for (const [name, value] of [['x-service-webhook-id', eventId], ['x-service-webhook-event', eventType], ['x-service-webhook-timestamp', timestampText], ['x-service-webhook-signature', signatureHeader]] as const) {
    if (!value) throw new WebhookVerificationError('missing_header', `header ${name} is missing`)
  }
  if (!/^\d{1,12}$/.test(timestampText!)) throw new WebhookVerificationError('malformed_timestamp', `x-service-webhook-timestamp "${timestampText}" is not unix seconds`)
  const candidates = signatureHeader!.trim().split(/\s+/).filter((part) => part.startsWith('v1='))
  const valid = candidates.map((part) => part.slice(3)).filter((hex) => /^[0-9a-f]{64}$/.test(hex))
  if (valid.length === 0) throw new WebhookVerificationError('malformed_signature', 'x-service-webhook-signature has no v1=<64 lowercase hex> value')
  const expected = secrets.map((secret) => Buffer.from(computeSignature(secret, timestampText!, body), 'hex'))
  if (!valid.some((hex) => expected.some((signature) => timingSafeEqual(Buffer.from(hex, 'hex'), signature)))) {
    // The sandbox's secrets have no whitespace: one around it is a file read without trim().
    const padded = secrets.some((secret) => secret !== secret.trim()) ? '; the secret has a line break or spaces around it (read from a file?): trim it' : ''
    // What GET /webhooks shows (secretPreview), or a report's masked copy, copied for the secret.
    const preview = secrets.some(isSecretPreview)
      ? '; the secret is a preview (whsec_...abcd, as secretPreview and the reports show it), not the secret: use the signingSecret the endpoint\'s registration answered (POST /api/sandbox/webhooks, with rotate_secret: true for a new one)'
      : ''
    throw new WebhookVerificationError('signature_mismatch', `signature does not match the body and timestamp for ${secrets.length === 1 ? 'this secret' : `any of the ${secrets.length} secrets`}${padded}${preview}`)
  }
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const now = input.now ?? Math.floor(Date.now() / 1000)
  const timestamp = Number(timestampText)
  if (timestamp < now - tolerance) throw new WebhookVerificationError('timestamp_too_old', `timestamp is ${now - timestamp} s old (tolerance ${tolerance} s)`)
  if (timestamp > now + tolerance) throw new WebhookVerificationError('timestamp_too_new', `timestamp is ${timestamp - now} s ahead (tolerance ${tolerance} s)`)
  return { eventId: eventId!, eventType: eventType!, timestamp }
}
