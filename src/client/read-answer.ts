import type { ClientAnswer } from './request-types.js'

/** A Retry-After header in ms: seconds or an HTTP date, as RFC 9110 allows; falls back to 1 s. */
export function parseRetryAfter(value: string | null): number {
  if (!value) return 1000
  const seconds = Number(value)
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now()
  return Math.max(Number.isFinite(ms) ? ms : 1000, 0)
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
