import { setTimeout as sleep } from 'node:timers/promises'
import type { H3Event } from 'h3'
import { ApiError } from './api-error.js'
import type { RouteAnswer } from './route-types.js'
import type { SandboxServices } from './services.js'
import type { FaultDecision, FaultFailure } from '../faults/fault-plan.js'
import { FAULT_PAGE_MARK } from '../faults/fault-page.js'

/** Requests whose connection a fault dropped where there is no socket to drop (createSandbox's fetch). */
const droppedRequests = new WeakSet<object>()

/** Whether a fault dropped this request's answer (Sandbox.fetch then rejects as fetch does on a lost connection). */
export function wasDropped(request: object): boolean {
  return droppedRequests.has(request)
}

/**
 * Runs `route` as a fault decision says: not at all (`status`, `drop_before`) or as usual
 * (`drop_after`, whose answer is cut by dropConnection once it is made); `latency` delays the
 * answer. A route that runs runs at once and its answer waits, as from a server slow to answer:
 * a client that times out meanwhile and retries with the same Idempotency-Key gets the replay.
 * Run after the wait, the retry executed and the first attempt became the replay nobody read.
 * The sandbox's close() ends the wait: the answer goes out then. `keyed`: the request is a POST,
 * whose retry must carry its Idempotency-Key (GET and DELETE take none), as a failure's message says.
 */
export async function runFaulted(decision: FaultDecision, services: SandboxServices, headers: Record<string, string>, route: () => Promise<RouteAnswer>, keyed = true): Promise<RouteAnswer> {
  const failure = decision.failure
  try {
    if (failure?.fault === 'status') return answerStatusFault(failure.status, failure.retryAfter, services, headers, keyed)
    if (failure?.fault === 'drop_before') return { status: 0, body: {} }
    return await route()
  } finally {
    // Cut short by close(): a wait of up to a minute kept the closed sandbox's process alive.
    if (decision.latencyMs) await sleep(decision.latencyMs, undefined, { signal: services.closing }).catch(() => {})
  }
}

/** Whether the decision cuts the connection instead of answering. */
export function dropsAnswer(decision: FaultDecision | undefined): boolean {
  return decision?.failure?.fault === 'drop_before' || decision?.failure?.fault === 'drop_after'
}

/**
 * Closes the request's connection without an answer: the socket is destroyed, so the client sees
 * a connection reset (as from a crashed server or a proxy timeout) whatever is written after.
 */
export function dropConnection(event: H3Event): void {
  const res = event.runtime?.node?.res
  if (res) res.destroy()
  else droppedRequests.add(event.req)
}

/** `latency 300ms, status 503`: the faults a request got, for its log line. */
export function describeFault(decision: FaultDecision | undefined): string | undefined {
  if (!decision) return undefined
  const parts = decision.latencyMs === undefined ? [] : [`latency ${decision.latencyMs}ms`]
  if (decision.failure) parts.push(describeFailure(decision.failure))
  return parts.join(', ')
}

function describeFailure(failure: FaultFailure): string {
  return failure.fault === 'status' ? `status ${failure.status}` : failure.fault
}

/**
 * The answer of a `status` fault, nothing executed. 429 is the rate limit's own answer (code,
 * Retry-After, RateLimit-* with nothing remaining); 500 and 503 the envelope with
 * SANDBOX_FAULT_INJECTED; 502 and 504 a proxy's HTML page with none of the API's headers, as a
 * gateway in front of a server that is down or slow answers.
 */
function answerStatusFault(status: number, retryAfter: number | undefined, services: SandboxServices, headers: Record<string, string>, keyed: boolean): RouteAnswer {
  const wait: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }
  if (status === 502 || status === 504) {
    const title = status === 502 ? '502 Bad Gateway' : '504 Gateway Timeout'
    return { status, text: `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>${FAULT_PAGE_MARK}</center>\r\n</body>\r\n</html>\r\n`, headers: { 'content-type': 'text/html', ...wait }, errorCode: null }
  }
  if (status === 429) return answerRateLimitFault(retryAfter ?? 1, services, headers, keyed)
  const retry = keyed ? 'retry with the same Idempotency-Key' : 'send the request again'
  const error = new ApiError('SANDBOX_FAULT_INJECTED', `A ${status} injected by the sandbox's fault injection (serve --faults); nothing was executed: ${retry}.`, { fault: 'status' })
  return { status, body: error.toBody(), errorCode: error.code, headers: wait }
}

/**
 * An injected 429: the rate limit's own answer, with the key's window. With the limit off there is
 * no window, and no other answer shows one: Retry-After as the rule gives it, and no RateLimit-*
 * or limit in details (the default 120/60 they showed was no limit this server applies).
 */
function answerRateLimitFault(seconds: number, services: SandboxServices, headers: Record<string, string>, keyed: boolean): RouteAnswer {
  const message = `Rate limited by the sandbox's fault injection (serve --faults); retry after ${seconds} s${keyed ? ' with the same Idempotency-Key' : ''}.`
  const limit = headers['ratelimit-limit']
  if (limit === undefined || services.rateLimitWindowSeconds === 0) {
    const error = new ApiError('SANDBOX_RATE_LIMIT_EXCEEDED', message, { retry_after_seconds: seconds })
    return { status: 429, body: error.toBody(), errorCode: error.code, headers: { 'retry-after': String(seconds) } }
  }
  const error = new ApiError('SANDBOX_RATE_LIMIT_EXCEEDED', message, { limit: Number(limit), window_seconds: services.rateLimitWindowSeconds, retry_after_seconds: seconds })
  return { status: 429, body: error.toBody(), errorCode: error.code, headers: { 'retry-after': String(seconds), 'ratelimit-limit': limit, 'ratelimit-remaining': '0', 'ratelimit-reset': String(seconds) } }
}
