import type { H3Event } from 'h3'
import { ApiError } from './api-error.js'
import { readBodyEarly } from './body.js'
import type { Principal } from './auth.js'
import type { RateDecision } from './rate-limiter.js'
import { createRequestId } from './ids.js'
import { forgetHandledRequest, noteHandledRequest } from './timed-out-requests.js'
import { takeConnectionTurn } from './connection-turns.js'
import { runIdempotent } from './idempotency.js'
import { logRequest, type KnownKey } from './log-request.js'
import { renderError } from './render-error.js'
import type { RouteAnswer, RouteContext, RouteSpec } from './route-types.js'
import { sendJson } from './send-json.js'
import { sessionSlotOf } from './session-doc.js'
import type { SandboxServices } from './services.js'
import { stringifyOnce } from '../storage/json-memo.js'
import type { FaultDecision } from '../faults/fault-plan.js'
import { describeFault, dropConnection, dropsAnswer, runFaulted } from './fault-hook.js'

async function runRoute(event: H3Event, spec: RouteSpec, ctx: RouteContext): Promise<RouteAnswer> {
  if (spec.kind === 'stub') throw spec.error
  if (spec.kind === 'read') {
    const doc = spec.session ? await ctx.services.sessions.load(ctx.principal) : undefined
    const body = await spec.read(doc, ctx)
    if (spec.fixed) return { status: 200, bodyJson: stringifyOnce(body) }
    return spec.stringifyFields ? { status: 200, bodyFields: spec.stringifyFields(body) } : { status: 200, body }
  }
  return runIdempotent(event, spec, ctx)
}

/**
 * Runs one API request end to end: request id, authentication, rate limit, the route, the error
 * envelope, headers and the request log. Every answer, success or error, carries `request_id`
 * in the body and `x-request-id` as a header. Requests pipelined on one connection run one
 * after another, in the order they came.
 */
export async function handleApiRequest(event: H3Event, spec: RouteSpec, services: SandboxServices): Promise<string> {
  const socket = event.runtime?.node?.req?.socket
  const release = await takeConnectionTurn(socket)
  try {
    return await answerApiRequest(event, spec, services, socket)
  } finally {
    release()
  }
}

async function answerApiRequest(event: H3Event, spec: RouteSpec, services: SandboxServices, socket: object | undefined): Promise<string> {
  const started = performance.now()
  const requestId = createRequestId()
  noteHandledRequest(socket, requestId)
  const headers: Record<string, string> = { 'x-request-id': requestId }
  let principal: Principal | undefined
  let answer: RouteAnswer
  let fault: FaultDecision | undefined
  try {
    principal = await services.auth.authenticate(event.req.headers.get('authorization'))
    // Any authenticated request counts, a refused or rate-limited one too: the key is in use.
    if (services.keyUse) await services.keyUse.note(sessionSlotOf(principal))
    const decision = services.rateLimiter?.check(principal.keyId)
    if (decision) {
      Object.assign(headers, rateLimitHeaders(decision))
      if (!decision.allowed) {
        throw new ApiError('SANDBOX_RATE_LIMIT_EXCEEDED', `More than ${decision.limit} requests in ${services.rateLimitWindowSeconds} seconds for this key; retry after ${decision.resetSeconds} s.`,
          { limit: decision.limit, window_seconds: services.rateLimitWindowSeconds, retry_after_seconds: decision.resetSeconds },
          { 'retry-after': String(decision.resetSeconds) })
      }
    }
    const ctx = { requestId, principal, params: decodeParams(event.context.params), services }
    fault = services.faults?.decide({ method: event.req.method, path: event.url.pathname, apiKey: principal.apiKey, idempotencyKey: event.req.headers.get('idempotency-key') })
    if (fault?.latencyMs && spec.kind === 'write') readBodyEarly(event)
    answer = fault ? await runFaulted(fault, services, headers, () => runRoute(event, spec, ctx), event.req.method === 'POST') : await runRoute(event, spec, ctx)
  } catch (error) {
    answer = renderError(error, services, spec.kind !== 'read')
  }
  const known = principal ?? identifyUncounted(event, services, headers)
  Object.assign(headers, answer.headers)
  // drop_before made no answer (status 0); drop_after's was made, and stored, but is never sent.
  const response = answer.status === 0 ? '' : sendJson(event, requestId, answer, headers)
  if (dropsAnswer(fault)) dropConnection(event)
  forgetHandledRequest(socket, requestId)
  logRequest(event, services, known, { requestId, status: answer.status, errorCode: answer.errorCode ?? null, durationMs: performance.now() - started, fault: describeFault(fault), ignoredFields: answer.ignoredFields, replayed: answer.replayed }, response)
  return response
}

/** Answers requests outside any route (404/405), still in the envelope. */
export function answerWithoutRoute(event: H3Event, error: ApiError, services: SandboxServices): string {
  const requestId = createRequestId()
  const answer = renderError(error, services)
  const headers: Record<string, string> = { 'x-request-id': requestId }
  const known = identifyUncounted(event, services, headers)
  const response = sendJson(event, requestId, answer, { ...headers, ...answer.headers })
  logRequest(event, services, known, { requestId, status: answer.status, errorCode: error.code, durationMs: 0 }, response)
  return response
}

/** Path parameters as sent before encoding (the router gives them encoded: `loan%20x`). */
function decodeParams(params: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(params ?? {}).map(([name, value]) => {
    try {
      return [name, decodeURIComponent(value)]
    } catch {
      return [name, value]
    }
  }))
}

function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return { 'ratelimit-limit': String(decision.limit), 'ratelimit-remaining': String(decision.remaining), 'ratelimit-reset': String(decision.resetSeconds) }
}

/**
 * For an answer given before the key was authenticated and counted (a refused key, a path or
 * method the API lacks): the key presented, if the sandbox knows it, and its rate-limit window,
 * shown without counting this request (decisions.md: every response carries the headers).
 */
function identifyUncounted(event: H3Event, services: SandboxServices, headers: Record<string, string>): KnownKey | undefined {
  const known = services.auth.identifyKnownKey(event.req.headers.get('authorization'))
  if (known && services.rateLimiter) Object.assign(headers, rateLimitHeaders(services.rateLimiter.peek(known.keyId)))
  return known
}

