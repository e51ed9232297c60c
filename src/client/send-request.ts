import { randomUUID } from 'node:crypto'
import { ofetch } from 'ofetch'
import { SandboxConnectionError, SandboxRequestError } from './api-error.js'
import { NOT_IN_HEADER } from './header-value.js'
import { findProxyRefusal } from './error-causes.js'
import { findCertificateError, isGatewayError, isPlainHttpError, isSafeToRetry } from './retry-rules.js'

/** The client's time per attempt unless `timeoutMs` says otherwise. */
export const DEFAULT_TIMEOUT_MS = 30_000
/** The client's longest Retry-After wait unless `maxRetryAfterMs` says otherwise. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 30_000

/** One request as the client sends it. */
export interface ClientRequest {
  method: 'GET' | 'POST' | 'DELETE'
  path: string
  body?: unknown
  /**
   * For POSTs: sent as `Idempotency-Key`; generated when absent, kept across retries. null sends
   * no header at all (to see the server refuse that); "" sends it empty.
   */
  idempotencyKey?: string | null
  /** Overrides the client's API key for this request (null sends none). */
  apiKey?: string | null
  headers?: Record<string, string>
}

/** One answer as the client received it, whatever its status. */
export interface ClientAnswer {
  status: number
  headers: Headers
  /** The body parsed as JSON, or undefined when empty or not JSON. */
  body: any // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string
  requestId: string | null
  errorCode: string | null
  idempotencyKey: string | null
  /** Requests sent for this answer: 1 plus the retries. */
  attempts: number
  durationMs: number
  /** True when the body was never read (a scenario's `drop_answer` step): `text` is empty, `body` undefined. */
  bodyUnread?: boolean
  /**
   * True when an earlier attempt got no answer of the server's (a network error, a proxy's
   * 502/503/504) and may have been carried out: this answer may be its replay. Not after a 429,
   * which refused before acting.
   */
  afterLostAnswer?: boolean
}

/** Transport settings shared by every request of a client. */
export interface TransportOptions {
  baseUrl: string
  // `| undefined` throughout: `apiKey: process.env.X` must type-check under exactOptionalPropertyTypes.
  apiKey?: string | null | undefined
  /**
   * Retries after a network error, a proxy's 502/503/504 or a 429, with the same key and body; and
   * after a network error, of a 409 IDEMPOTENCY_KEY_IN_PROGRESS (the lost attempt is still running). Default 3.
   */
  retries?: number | undefined
  /** Per attempt. Default 30 s. */
  timeoutMs?: number | undefined
  /** Upper bound of one Retry-After wait, so a hostile header cannot park CI. Default 30 s. */
  maxRetryAfterMs?: number | undefined
  /**
   * A 429 whose Retry-After is above maxRetryAfterMs: `wait_max` (default) waits that long and
   * retries; `return` returns the 429 at once, for a caller that would rather say why than retry
   * early into another 429.
   */
  overMaxRetryAfter?: 'wait_max' | 'return' | undefined
  /**
   * Called after every attempt, e.g. to log or to check answers against a contract; `wire` is the
   * request as it was sent (URL, headers with the Authorization, body text).
   */
  onAttempt?: ((request: ClientRequest & { idempotencyKey?: string }, answer: ClientAnswer | Error, wire: PreparedRequest) => void) | undefined
  /**
   * Called before each wait for a retry: after a 429 (its Retry-After), a network error (`error`),
   * a proxy's 502/503/504 (`status`), or the lost attempt still in progress. `attempt` is the one
   * that just ended, of `maxAttempts`.
   */
  onRetryWait?: ((wait: { reason: 'rate_limited' | 'network_error' | 'gateway_error' | 'in_progress'; ms: number; attempt: number; maxAttempts: number; request: ClientRequest; error?: Error; status?: number }) => void) | undefined
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A Retry-After header in ms: seconds or an HTTP date, as RFC 9110 allows; falls back to 1 s. */
export function parseRetryAfter(value: string | null): number {
  if (!value) return 1000
  const seconds = Number(value)
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now()
  return Math.max(Number.isFinite(ms) ? ms : 1000, 0)
}

function toAnswer(status: number, headers: Headers, text: string, attempts: number, started: number, idempotencyKey: string | null): ClientAnswer {
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

/** A request as it goes on the wire: URL, headers (auth, Idempotency-Key, JSON) and body text. */
export interface PreparedRequest {
  url: string
  headers: Record<string, string>
  text: string | undefined
  idempotencyKey: string | null
}

/**
 * Refuses a header value HTTP cannot carry, by name, instead of fetch's "Cannot convert argument to
 * a ByteString", which the retries would take for a network error.
 */
function checkHeaderValue(name: string, value: string): void {
  const bad = NOT_IN_HEADER.exec(value)
  if (!bad) return
  const char = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
  throw new SandboxRequestError(`the ${name} header cannot carry ${JSON.stringify(value)}: U+${char} is not a character an HTTP header can hold (Latin-1 text without control characters)`)
}

/**
 * Builds the wire form of a request; POSTs get the caller's Idempotency-Key or a fresh one. An
 * Idempotency-Key or Authorization the caller put in `headers` (any case) is used, not doubled.
 */
export function prepareRequest(options: Pick<TransportOptions, 'baseUrl' | 'apiKey'>, request: ClientRequest): PreparedRequest {
  const given = Object.fromEntries(Object.entries(request.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]))
  const idempotencyKey = request.method !== 'POST' || request.idempotencyKey === null ? null : (request.idempotencyKey ?? given['idempotency-key'] ?? randomUUID())
  const apiKey = request.apiKey === undefined ? options.apiKey : request.apiKey
  const headers: Record<string, string> = { accept: 'application/json', ...given }
  // The client's own key gives way to an Authorization header sent with the request.
  if (apiKey && (request.apiKey !== undefined || !headers.authorization)) headers.authorization = `Bearer ${apiKey}`
  if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey
  else delete headers['idempotency-key']
  for (const [name, value] of Object.entries(headers)) checkHeaderValue(name, value)
  const text = request.body === undefined ? undefined : JSON.stringify(request.body)
  if (text !== undefined) headers['content-type'] = 'application/json'
  // Joined as text so a base URL with a path prefix keeps it.
  const url = `${options.baseUrl.replace(/\/+$/, '')}${request.path.startsWith('/') ? '' : '/'}${request.path}`
  return { url, headers, text, idempotencyKey }
}

/**
 * Sends one request and returns its answer whatever the status. Network errors, a proxy's
 * 502/503/504 and 429 are retried with the same Idempotency-Key and body (the spec's retry rule),
 * 429 after its Retry-After; a POST without an Idempotency-Key is never sent twice, and neither an
 * untrusted TLS certificate nor an https:// URL for a plain-http server is retried. After a lost answer, a 409 IDEMPOTENCY_KEY_IN_PROGRESS
 * is the lost attempt still running on the server: it is retried too, as the spec says ("retry
 * later with the same key and body"). Redirects are not followed (see below).
 */
export async function sendRequest(options: TransportOptions, request: ClientRequest): Promise<ClientAnswer> {
  const retries = options.retries ?? 3
  const wire = prepareRequest(options, request)
  const { url, headers, text, idempotencyKey } = wire
  const sent = { ...request, idempotencyKey: idempotencyKey ?? undefined }
  const started = performance.now()
  let lostAnswer = false
  for (let attempt = 1; ; attempt++) {
    let answer: ClientAnswer
    try {
      const response = await ofetch.raw(url, {
        method: request.method,
        headers,
        body: text,
        retry: 0,
        timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        // fetch would send a 301/302 POST again as a GET without its body (its answer then taken
        // for the POST's), and drop Authorization on a move to another origin (http -> https): a
        // 3xx is returned as it is, Location and all, for the caller to fix its base URL.
        redirect: 'manual',
        ignoreResponseError: true,
        responseType: 'text',
      })
      answer = toAnswer(response.status, response.headers, (response._data as string | undefined) ?? '', attempt, started, idempotencyKey)
    } catch (error) {
      options.onAttempt?.(sent, error as Error, wire)
      const certificate = findCertificateError(error)
      const plainHttp = isPlainHttpError(error)
      const proxyRefusal = findProxyRefusal(error)
      const safe = isSafeToRetry(request, idempotencyKey)
      if (attempt > retries || certificate || plainHttp || proxyRefusal || !safe) {
        throw new SandboxConnectionError(url, attempt, { cause: (error as { cause?: unknown }).cause ?? error, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, certificate, plainHttp, proxyRefusal, unsafe: !safe && attempt <= retries })
      }
      lostAnswer = true
      const ms = Math.min(100 * 2 ** (attempt - 1), 2000)
      options.onRetryWait?.({ reason: 'network_error', ms, attempt, maxAttempts: retries + 1, request, error: error as Error })
      await sleep(ms)
      continue
    }
    if (lostAnswer) answer.afterLostAnswer = true
    options.onAttempt?.(sent, answer, wire)
    if (lostAnswer && answer.errorCode === 'IDEMPOTENCY_KEY_IN_PROGRESS' && attempt <= retries) {
      const ms = Math.min(250 * 2 ** (attempt - 1), 2000)
      options.onRetryWait?.({ reason: 'in_progress', ms, attempt, maxAttempts: retries + 1, request })
      await sleep(ms)
      continue
    }
    if (isGatewayError(answer) && attempt <= retries && isSafeToRetry(request, idempotencyKey)) {
      // The server behind the proxy may have acted (a 504 after it began): like a network error.
      lostAnswer = true
      const backoff = Math.min(250 * 2 ** (attempt - 1), 2000)
      const asked = answer.headers.has('retry-after') ? parseRetryAfter(answer.headers.get('retry-after')) : 0
      const ms = Math.min(Math.max(backoff, asked), options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS)
      options.onRetryWait?.({ reason: 'gateway_error', ms, attempt, maxAttempts: retries + 1, request, status: answer.status })
      await sleep(ms)
      continue
    }
    if (answer.status !== 429 || attempt > retries) return answer
    const asked = parseRetryAfter(answer.headers.get('retry-after'))
    const max = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS
    if (asked > max && options.overMaxRetryAfter === 'return') return answer
    const ms = Math.min(asked, max)
    options.onRetryWait?.({ reason: 'rate_limited', ms, attempt, maxAttempts: retries + 1, request })
    await sleep(ms)
  }
}
