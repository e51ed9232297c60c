import type { HeaderSource } from './signature.js'

// Far beyond any date in unix seconds (year 5138), and below any in milliseconds since 1973.
const LARGEST_PLAUSIBLE_SECONDS = 1e11

/** VALUE as a message shows it: text quoted, so that "300" reads apart from 300. */
function showValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value)
}

/**
 * Throws a TypeError when NAME (verifyWebhook, constructWebhookEvent) was called as Stripe's
 * constructEvent(body, signature, secret) is, from JavaScript: the body in place of the one
 * object, whose missing secret was then reported as a secret not set.
 */
export function checkSingleInput(name: string, input: unknown, count: number): void {
  const bodyFirst = typeof input !== 'object' || input === null || ArrayBuffer.isView(input) || input instanceof ArrayBuffer
  if (!bodyFirst && count <= 1) return
  throw new TypeError(`${name} takes one object, { secret, body, headers }, not the arguments of Stripe's constructEvent(body, signature, secret): ${name}({ secret, body: rawBody, headers: request.headers })`)
}

/** The list of secrets CALLER (the function the receiver called) takes, or a TypeError: a secret not set is a configuration mistake, not a forged delivery. */
export function readSecrets(secret: unknown, caller: string): readonly string[] {
  const secrets: readonly unknown[] = typeof secret === 'string' ? [secret] : Array.isArray(secret) ? secret : []
  if (secrets.length === 0 || secrets.some((one) => typeof one !== 'string' || one === '')) throw new TypeError(`${caller} needs a signing secret (or a list of them), none empty`)
  return secrets as readonly string[]
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * What to pass instead when HEADERS is a request (a fetch Request, Node's IncomingMessage,
 * Fastify's request, Hono's c.req), or undefined. Read as a record of headers, such a request has
 * none of the webhook's, and every delivery was refused as missing x-service-webhook-id. Header
 * values are strings, so a real record never holds an object under `headers` or `raw`; a request
 * that reads headers through get() (Express's req, Koa's ctx) verifies as it is.
 */
function describeRequestGiven(headers: object): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return undefined
  const { raw, headers: inner } = headers as { raw?: unknown; headers?: unknown }
  if (isRecord(raw) && isRecord(raw.headers) && typeof raw.headers.get === 'function') return 'pass c.req.raw.headers, or c.req.header() (all of them as a record)'
  return isRecord(inner) ? 'pass request.headers' : undefined
}

/**
 * Throws a TypeError for options that would make the timestamp check meaningless: with a NaN
 * tolerance or clock (Number() of an unset environment variable) every comparison is false, so
 * deliveries of any age, replays included, passed; with `Date.now()` every one was refused.
 */
export function checkVerifyOptions(input: { headers: HeaderSource; toleranceSeconds?: unknown; now?: unknown }, caller: string): void {
  if (input.headers === null || typeof input.headers !== 'object') throw new TypeError(`${caller} needs the request's headers (a Headers, or a record such as Node's request.headers), not ${showValue(input.headers)}`)
  const request = describeRequestGiven(input.headers)
  if (request) throw new TypeError(`${caller} needs the request's headers, not the request: ${request}`)
  const { toleranceSeconds, now } = input
  if (toleranceSeconds !== undefined && (typeof toleranceSeconds !== 'number' || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0)) {
    throw new TypeError(`toleranceSeconds must be a number of seconds from 0, not ${showValue(toleranceSeconds)}`)
  }
  if (now !== undefined && (typeof now !== 'number' || !Number.isFinite(now) || now < 0 || now >= LARGEST_PLAUSIBLE_SECONDS)) {
    const hint = typeof now === 'number' && now >= LARGEST_PLAUSIBLE_SECONDS ? ' (milliseconds? Math.floor(Date.now() / 1000))' : ''
    throw new TypeError(`now must be the current time in unix seconds, not ${showValue(now)}${hint}`)
  }
}
