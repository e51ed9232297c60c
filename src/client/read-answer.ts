import type { ClientAnswer } from './request-types.js'

// After the first of several values (a Retry-After sent twice, which fetch joins with ", "): a
// comma that another value follows, seconds or the start of an HTTP date (a weekday and a comma,
// or asctime's weekday and month). Not the comma inside an IMF-fixdate or RFC 850 date.
const LATER_VALUES = /\s*,\s*(?=[A-Z][a-z]{2,8}, |[A-Z][a-z]{2} [A-Z][a-z]{2} |\d+(?:\.\d+)?\s*(?:,|$)).*$/
// asctime names no zone, which Date.parse takes for local time; HTTP dates are GMT (RFC 9110 5.6.7).
const ASCTIME = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/

/**
 * A Retry-After header in ms: seconds or an HTTP date, as RFC 9110 allows; falls back to 1 s.
 * Read strictly: Date.parse takes almost anything for a date, so the "5, 5" that fetch makes of
 * a Retry-After sent twice (a CDN's beside the server's) was a day in 2005 and a wait of 0 ms.
 * Of a header sent twice, the first value counts, whatever the form of the second.
 */
export function parseRetryAfter(value: string | null): number {
  const seconds = /^(\d+(?:\.\d+)?)\s*(?:,|$)/.exec(value ?? '')
  if (seconds) return Number(seconds[1]) * 1000
  const first = value?.replace(LATER_VALUES, '')
  // All three HTTP-date forms (IMF-fixdate, RFC 850, asctime) name a year and an hh:mm:ss time.
  const date = first && /\b\d{2}:\d{2}:\d{2}\b/.test(first) && /\b\d{2,4}\b/.test(first) ? Date.parse(ASCTIME.test(first) ? `${first} GMT` : first) : Number.NaN
  return Number.isFinite(date) ? Math.max(date - Date.now(), 0) : 1000
}

/** An answer as the client returns it: the body parsed as JSON when it is, its request id and error code. */
export function toAnswer(status: number, headers: Headers, text: string, attempts: number, started: number, idempotencyKey: string | null): ClientAnswer {
  let body: unknown
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {}
  return {
    status,
    headers,
    body,
    text,
    requestId: typeof record.request_id === 'string' ? record.request_id : headers.get('x-request-id'),
    errorCode: typeof record.error_code === 'string' ? record.error_code : null,
    idempotencyKey,
    attempts,
    durationMs: Math.round((performance.now() - started) * 100) / 100,
  }
}
