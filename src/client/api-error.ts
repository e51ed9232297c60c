import type { ErrorCode } from '../errors/codes.js'
import { describeCertificateProblem } from '../text/certificate-advice.js'
import { findProxyRefusal, isProxyGatewayStatus, listCauses } from './error-causes.js'
import type { ClientAnswer } from './request-types.js'
import { isGatewayError } from './retry-rules.js'
import { isInjectedFaultPage } from '../faults/fault-page.js'

/** Why a 2xx answer is refused: it lacks the `request_id` every answer of the API carries. */
export const NOT_SANDBOX_ANSWER = 'not the sandbox API\'s JSON (no request_id): is the base URL the root of a sandbox server, not a webhook receiver or another service?'

/** What a 502 or 504 that serve --faults injected is: the page of a proxy that is not there. */
export const INJECTED_PAGE = 'a proxy\'s page injected by serve --faults (a status rule), not a proxy in front of the server'

/** INJECTED_PAGE for an answer that is serve --faults' proxy page, else undefined. */
export function describeInjectedPage(answer: Pick<ClientAnswer, 'status' | 'errorCode' | 'text'>): string | undefined {
  return isGatewayError(answer) && isInjectedFaultPage(answer.text) ? INJECTED_PAGE : undefined
}

/** A non-2xx answer of the sandbox API, or a 2xx that is not the API's own, as a typed error. */
export class SandboxApiError extends Error {
  override name = 'SandboxApiError'
  /** The answer's `details` (e.g. `reason` of a 409 FLOW_CONFLICT, `field` of a 400), if any. */
  readonly details: Record<string, unknown> | undefined
  /** True when the answer is the one stored under this Idempotency-Key, replayed (a stored 404 or 409). */
  readonly idempotencyReplayed: boolean
  /** The answer's `error_code` (spec part 7), or null when the body carried none (not our API, or no body). */
  readonly errorCode: ErrorCode | null

  constructor(
    readonly status: number,
    errorCode: string | null,
    /** The answer's request id (body `request_id`, else the `x-request-id` header). */
    readonly requestId: string | null,
    /** The parsed body, or the raw text when it was not JSON. */
    readonly body: unknown,
    method: string,
    path: string,
    /** A redirect's Location: redirects are not followed, so a moved base URL shows up here. */
    location?: string | null,
    /** Why the answer is not the sandbox API's own: a 2xx without request_id, an error without error_code, a proxy's page serve --faults injected (INJECTED_PAGE). */
    problem?: string,
    /**
     * The Idempotency-Key the request was sent with (null for a GET or DELETE, or a POST sent
     * without one): a retry later, with the same body, must send it again (spec part 7).
     */
    readonly idempotencyKey: string | null = null,
  ) {
    // decisions.md "Envelope": errors carry their text in `error`.
    const record = body && typeof body === 'object' ? (body as { error?: unknown; details?: unknown; idempotency_replayed?: unknown }) : {}
    const message = typeof record.error === 'string' ? record.error : ''
    const moved = location && status >= 300 && status < 400 ? `: a redirect to ${location} (not followed; use the URL it names as the base URL)` : ''
    super(`${method} ${path} answered ${status}${errorCode ? ` ${errorCode}` : ''}${message ? `: ${message}` : ''}${moved}${problem ? `: ${problem}` : ''}`)
    this.errorCode = errorCode as ErrorCode | null
    this.details = record.details && typeof record.details === 'object' ? (record.details as Record<string, unknown>) : undefined
    this.idempotencyReplayed = record.idempotency_replayed === true
  }
}

/** The API could not be reached at all (refused, reset, DNS, timeout), after every retry. */
export class SandboxConnectionError extends Error {
  override name = 'SandboxConnectionError'
  /** The TLS verification code when the server's certificate is not trusted (e.g. `DEPTH_ZERO_SELF_SIGNED_CERT`). */
  readonly certificate: string | undefined
  /** The status an HTTP proxy answered instead of opening a tunnel (403, 407), if that is why. */
  readonly proxyRefusal: number | undefined
  /** True when an https:// URL met a server answering plain HTTP: it runs, on http://. */
  readonly plainHttp: boolean
  /** True when fetch refused the URL's port, one the fetch standard blocks: nothing was sent. */
  readonly blockedPort: boolean
  /**
   * The Idempotency-Key of the POST (null for a GET or DELETE, or a POST sent without one). Its
   * lost attempt may have been carried out: send it again later with this key and the same body,
   * as the spec asks, to get that attempt's answer rather than act twice.
   */
  readonly idempotencyKey: string | null
  constructor(readonly url: string, readonly attempts: number, options: { cause: unknown; timeoutMs?: number; certificate?: string | undefined; plainHttp?: boolean; proxyRefusal?: number | undefined; blockedPort?: boolean; unsafe?: boolean; message?: string; idempotencyKey?: string | null }) {
    const why = describeNetworkError(options.cause)
    const tries = `${attempts} attempt${attempts === 1 ? '' : 's'}`
    let message = `cannot reach ${url} (${why}) after ${tries}`
    // A server that takes connections but never answers costs attempts x timeout: say both, so
    // the time lost is explained and the timeout can be told apart from a refused connection.
    if (why === 'timed out' && options.timeoutMs !== undefined) message = `cannot reach ${url} (timed out after ${tries} of ${options.timeoutMs / 1000} s each)`
    // Not a server that is down: saying so would send the reader to the wrong place.
    // Node 24 adds its own hint (--use-system-ca) to the TLS message; the advice here is one for every version.
    if (options.certificate) message = `cannot reach ${url} (${options.certificate}: ${why.replace(/; if the root CA is installed locally, try running Node\.js with --use-system-ca$/, '')}); ${describeCertificateProblem(url, options.certificate)}`
    else if (options.proxyRefusal) message = `cannot reach ${url}: ${describeProxyRefusal(url, options.proxyRefusal, attempts)}`
    else if (options.plainHttp) message = `cannot reach ${url}: the server there answers plain HTTP, not TLS (ERR_SSL_WRONG_VERSION_NUMBER); use http:// rather than https:// (${toPlainHttpOrigin(url)})`
    else if (options.blockedPort) message = `cannot reach ${url}: fetch refuses port ${new URL(url).port} before connecting, as browsers do (a blocked port of the fetch standard, https://fetch.spec.whatwg.org/#port-blocking); serve the sandbox on another port`
    else if (options.unsafe) message += ' (a POST without an Idempotency-Key is not sent again: it may have been carried out)'
    super(options.message ?? message, { cause: options.cause })
    this.certificate = options.certificate
    this.proxyRefusal = options.proxyRefusal
    this.plainHttp = options.plainHttp === true
    this.blockedPort = options.blockedPort === true
    this.idempotencyKey = options.idempotencyKey ?? null
  }
}

/** What a proxy's refusal of a request to URL (after ATTEMPTS) means, and what to change. */
function describeProxyRefusal(url: string, status: number, attempts: number): string {
  if (status === 407) return 'the HTTP proxy answered 407 Proxy Authentication Required: give its credentials in the proxy variable, as http://USER:PASSWORD@HOST:PORT'
  const { hostname, port } = new URL(url)
  if (isProxyGatewayStatus(status)) {
    return `the HTTP proxy answered ${status} to CONNECT ${hostname}:${port || 443} ${attempts === 1 ? 'once' : `${attempts} times`} instead of opening a tunnel: it could not reach the server (down or restarting, or a name the proxy cannot resolve); is the server up? (NO_PROXY=${hostname} to connect directly)`
  }
  return `the HTTP proxy answered ${status} to CONNECT ${hostname}:${port || 443} instead of opening a tunnel: it does not let this host through; have it allowed, or name the host in NO_PROXY to connect directly`
}

/** The http:// origin of an https:// URL, keeping its port (443 when the URL names none). */
function toPlainHttpOrigin(url: string): string {
  const parsed = new URL(url)
  return `http://${parsed.host}${parsed.port ? '' : ':443'}`
}

/** Thrown before sending a request whose header HTTP cannot carry: retrying would not help. */
export class SandboxRequestError extends TypeError {
  override name = 'SandboxRequestError'
}

/**
 * The most telling part of a network error (`ECONNREFUSED`, `timed out`, ...): undici nests the
 * socket's code under "fetch failed".
 */
export function describeNetworkError(cause: unknown): string {
  let message: string | undefined
  // undici reports a proxy's refusal as an abort, which would read as a timeout.
  const refusal = findProxyRefusal(cause)
  if (refusal) return `the proxy answered ${refusal}`
  for (const current of listCauses(cause)) {
    if (typeof current.code === 'string' && /^E[A-Z]+$/.test(current.code)) return current.code
    if (current.name === 'TimeoutError' || current.name === 'AbortError') return 'timed out'
    if (typeof current.message === 'string' && current.message) message = current.message
  }
  return message ?? 'network error'
}
