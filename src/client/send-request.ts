import { ofetch } from 'ofetch'
import { SandboxConnectionError } from './api-error.js'
import { createAttemptSignal, joinSignals, sleep } from './abortable-wait.js'
import { findProxyRefusal, isProxyGatewayStatus } from './error-causes.js'
import { prepareRequest } from './prepare-request.js'
import { parseRetryAfter, toAnswer } from './read-answer.js'
import type { ClientAnswer, ClientRequest, TransportOptions } from './request-types.js'
import { findCertificateError, isBlockedPortError, isGatewayError, isPlainHttpError, isSafeToRetry } from './retry-rules.js'
import { findTransportNumberProblem } from './transport-numbers.js'
import { isInjectedFaultPage } from '../faults/fault-page.js'

/** The client's time per attempt unless `timeoutMs` says otherwise. */
export const DEFAULT_TIMEOUT_MS = 30_000
/** The client's longest Retry-After wait unless `maxRetryAfterMs` says otherwise. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 30_000

/** The error ofetch's own `timeout` aborts an attempt with, as the connection error expects (see createAttemptSignal). */
function createTimeoutError(): Error {
  const error = Object.assign(new Error('[TimeoutError]: The operation was aborted due to timeout'), { code: 23 })
  error.name = 'TimeoutError'
  return error
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
  const numbers = findTransportNumberProblem(options)
  if (numbers) throw new TypeError(numbers)
  const joined = joinSignals(options.signal, request.signal)
  try {
    return await sendAttempts(options, request, joined.signal)
  } finally {
    joined.dispose()
  }
}

/** sendRequest's attempts, retries and waits, all cancelled by SIGNAL. */
async function sendAttempts(options: TransportOptions, request: ClientRequest, signal: AbortSignal | undefined): Promise<ClientAnswer> {
  const retries = options.retries ?? 3
  const wire = prepareRequest(options, request)
  const { url, headers, text, idempotencyKey } = wire
  const sent = { ...request, idempotencyKey: idempotencyKey ?? undefined }
  const started = performance.now()
  let lostAnswer = false
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  for (let attempt = 1; ; attempt++) {
    let answer: ClientAnswer
    // ofetch's own `timeout` ends with the status line and headers, so a body that stops coming
    // would hold the request for ever (and it drops the timeout when given a signal): this timer
    // covers the whole attempt, body included, joined with the caller's signal if any.
    const attemptSignal = createAttemptSignal(signal, timeoutMs, createTimeoutError)
    try {
      const response = await ofetch.raw(url, {
        method: request.method,
        headers,
        body: text,
        retry: 0,
        signal: attemptSignal.signal,
        // fetch would send a 301/302 POST again as a GET without its body (its answer then taken
        // for the POST's), and drop Authorization on a move to another origin (http -> https): a
        // 3xx is returned as it is, Location and all, for the caller to fix its base URL.
        redirect: 'manual',
        ignoreResponseError: true,
        responseType: 'text',
      }).finally(() => attemptSignal.dispose())
      answer = toAnswer(response.status, response.headers, (response._data as string | undefined) ?? '', attempt, started, idempotencyKey)
    } catch (error) {
      // Cancelled, not failed: no attempt to tell of, nothing to retry.
      if (signal?.aborted) throw signal.reason
      options.onAttempt?.(sent, error as Error, wire)
      const certificate = findCertificateError(error)
      const plainHttp = isPlainHttpError(error)
      const proxyRefusal = findProxyRefusal(error)
      const proxyRefused = proxyRefusal !== undefined && !isProxyGatewayStatus(proxyRefusal)
      const blockedPort = isBlockedPortError(error)
      const safe = isSafeToRetry(request, idempotencyKey)
      if (attempt > retries || certificate || plainHttp || proxyRefused || blockedPort || !safe) {
        throw new SandboxConnectionError(url, attempt, { cause: (error as { cause?: unknown }).cause ?? error, timeoutMs, certificate, plainHttp, proxyRefusal, blockedPort, unsafe: !safe && attempt <= retries, idempotencyKey })
      }
      lostAnswer = true
      const ms = Math.min(100 * 2 ** (attempt - 1), 2000)
      options.onRetryWait?.({ reason: 'network_error', ms, attempt, maxAttempts: retries + 1, request, error: error as Error })
      await sleep(ms, signal)
      continue
    }
    if (lostAnswer) answer.afterLostAnswer = true
    options.onAttempt?.(sent, answer, wire)
    if (lostAnswer && answer.errorCode === 'IDEMPOTENCY_KEY_IN_PROGRESS' && attempt <= retries) {
      const ms = Math.min(250 * 2 ** (attempt - 1), 2000)
      options.onRetryWait?.({ reason: 'in_progress', ms, attempt, maxAttempts: retries + 1, request })
      await sleep(ms, signal)
      continue
    }
    if (isGatewayError(answer) && attempt <= retries && isSafeToRetry(request, idempotencyKey)) {
      // The server behind the proxy may have acted (a 504 after it began): like a network error.
      lostAnswer = true
      const backoff = Math.min(250 * 2 ** (attempt - 1), 2000)
      const asked = answer.headers.has('retry-after') ? parseRetryAfter(answer.headers.get('retry-after')) : 0
      const ms = Math.min(Math.max(backoff, asked), options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS)
      options.onRetryWait?.({ reason: 'gateway_error', ms, attempt, maxAttempts: retries + 1, request, status: answer.status, ...(isInjectedFaultPage(answer.text) ? { injected: true } : {}) })
      await sleep(ms, signal)
      continue
    }
    if (answer.status !== 429 || attempt > retries) return answer
    const asked = parseRetryAfter(answer.headers.get('retry-after'))
    const max = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS
    if (asked > max && options.overMaxRetryAfter === 'return') return answer
    const ms = Math.min(asked, max)
    options.onRetryWait?.({ reason: 'rate_limited', ms, attempt, maxAttempts: retries + 1, request })
    await sleep(ms, signal)
  }
}
