import type { H3Event } from 'h3'
import { ApiError, toApiError } from './api-error.js'
import type { Principal } from './auth.js'
import type { RateDecision } from './rate-limiter.js'
import { createRequestId } from './ids.js'
import { runIdempotent } from './idempotency.js'
import type { SandboxServices } from './services.js'
import type { SessionDoc } from './session-doc.js'
import { clipLoggedText, type RequestLogEntry } from './request-log.js'
import { readLoggedBody } from './body.js'
import type { AnswerParts } from './loan-state-json.js'
import { stringifyOnce } from '../storage/json-memo.js'
import { StorageError } from '../storage/storage-error.js'
import type { FaultDecision } from '../faults/fault-plan.js'
import { describeFault, dropConnection, dropsAnswer, runFaulted } from './fault-hook.js'

/** What a route sees of the request it serves. */
export interface RouteContext {
  requestId: string
  principal: Principal
  params: Record<string, string>
  services: SandboxServices
}

/** A GET route: reads the session and answers a body (without `request_id`). */
export interface ReadRoute {
  kind: 'read'
  /** Whether the route needs the session document at all (GET config does not). */
  session: boolean
  /** The route answers one unchanging object (GET config): its JSON is made once, not per request. */
  fixed?: boolean
  read(doc: SessionDoc | undefined, ctx: RouteContext): Record<string, unknown> | Promise<Record<string, unknown>>
  /**
   * The members of what `read` answered (its JSON text without the braces), when the route can
   * make them cheaper than JSON.stringify (see RouteAnswer.bodyFields).
   */
  stringifyFields?(body: Record<string, unknown>): string
}

/** A POST route that changes state: idempotent, serialized per key, committed in one write. */
export interface WriteRoute {
  kind: 'write'
  /** False for DELETE: no Idempotency-Key, nothing remembered. Default true (every POST). */
  idempotent?: boolean
  /** Validates the parsed JSON body; throws SandboxError (400s, never stored). */
  parse(body: unknown): unknown
  /** Applies the change to the document; returns the new document and the answer body. */
  execute(doc: SessionDoc, input: unknown, ctx: RouteContext): WriteResult | Promise<WriteResult>
}

/** What a write route produced. */
export interface WriteResult {
  doc: SessionDoc
  body: Record<string, unknown>
  /** `body` as JSON text, when the route can make it cheaper than JSON.stringify. */
  bodyJson?: string
  /** ... or only its members (see RouteAnswer), with what to store for replays instead of the text. */
  bodyFields?: string
  parts?: AnswerParts
}

/** A route that authenticates and then answers a fixed error (endpoints a later release completes). */
export interface StubRoute {
  kind: 'stub'
  error: ApiError
}

/** Any route the pipeline can run. */
export type RouteSpec = ReadRoute | WriteRoute | StubRoute

/** The answer a route produced, before the envelope is applied. */
export interface RouteAnswer {
  status: number
  /** The body without `request_id`, as an object or already as JSON text. */
  body?: Record<string, unknown>
  bodyJson?: string
  /**
   * ... or as the members of its JSON text, without the braces: the envelope wraps them as they
   * are. Taking the members out of `bodyJson` (slice) copies the whole text, twice per answer
   * with the replay flag: most of the cost of a 1 MB loan-state answer.
   */
  bodyFields?: string
  headers?: Record<string, string>
  errorCode?: string | null
  /** An answer that is not the API's JSON (a fault's proxy page): sent as it is, with only `headers`. */
  text?: string
  /** Top-level body fields the route's schema does not know, dropped (ignored-fields.ts). */
  ignoredFields?: string[]
}

/**
 * Answers through h3's response fields and a string body: much cheaper than building a web
 * Response, whose body h3 would have to stream back out.
 */
function sendJson(event: H3Event, requestId: string, answer: RouteAnswer, headers: Record<string, string>): string {
  event.res.status = answer.status
  const target = event.res.headers
  if (answer.text !== undefined) {
    for (const name in answer.headers) target.set(name, answer.headers[name]!)
    return answer.text
  }
  target.set('content-type', 'application/json; charset=utf-8')
  for (const name in headers) target.set(name, headers[name]!)
  if (answer.bodyFields !== undefined) return `{"request_id":"${requestId}"${answer.bodyFields === '' ? '' : `,${answer.bodyFields}`}}`
  const inner = answer.bodyJson ?? JSON.stringify(answer.body ?? {})
  // request_id goes first; ids are [a-z0-9_] so need no escaping.
  return `{"request_id":"${requestId}"${inner.length > 2 ? `,${inner.slice(1)}` : '}'}`
}

/** Renders an ApiError (or an unexpected failure) into the spec's error envelope. */
export function renderError(error: unknown, services: SandboxServices): RouteAnswer {
  const api = toApiError(error)
  if (api) return { status: api.status, body: api.toBody(), headers: api.extraHeaders, errorCode: api.code }
  if (error instanceof StorageError) {
    services.logError(error)
    // A write that timed out may still land (a paused redis catches up): say what is known.
    const database = new ApiError('SANDBOX_API_KEY_DATABASE_REQUIRED', 'The sandbox storage could not be read or written. A change this request asked for is not confirmed (it was applied whole or not at all): retry with the same Idempotency-Key, which applies it at most once.')
    return { status: database.status, body: database.toBody(), errorCode: database.code }
  }
  services.logError(error)
  const internal = new ApiError('INTERNAL_ERROR', 'Unexpected sandbox error; see the server log.')
  return { status: internal.status, body: internal.toBody(), errorCode: internal.code }
}

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
 * in the body and `x-request-id` as a header.
 */
export async function handleApiRequest(event: H3Event, spec: RouteSpec, services: SandboxServices): Promise<string> {
  const started = performance.now()
  const requestId = createRequestId()
  const headers: Record<string, string> = { 'x-request-id': requestId }
  let principal: Principal | undefined
  let answer: RouteAnswer
  let fault: FaultDecision | undefined
  try {
    principal = await services.auth.authenticate(event.req.headers.get('authorization'))
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
    answer = fault ? await runFaulted(fault, services, headers, () => runRoute(event, spec, ctx)) : await runRoute(event, spec, ctx)
  } catch (error) {
    answer = renderError(error, services)
  }
  const known = principal ?? identifyUncounted(event, services, headers)
  Object.assign(headers, answer.headers)
  // drop_before made no answer (status 0); drop_after's was made, and stored, but is never sent.
  const response = answer.status === 0 ? '' : sendJson(event, requestId, answer, headers)
  if (dropsAnswer(fault)) dropConnection(event)
  logRequest(event, services, known, { requestId, status: answer.status, errorCode: answer.errorCode ?? null, durationMs: performance.now() - started, fault: describeFault(fault), ignoredFields: answer.ignoredFields }, response)
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

/** A key the request presented that the sandbox knows (auth.identifyKnownKey). */
type KnownKey = Pick<Principal, 'apiKey' | 'keyId'>

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

/**
 * Logs an answered request under its key: the authenticated one, or for a refused or route-less
 * request a key the sandbox knows (a revoked key's 401s show in `sandbox logs --key`). `serve`
 * prints every request; one with no known key is not stored.
 */
function logRequest(event: H3Event, services: SandboxServices, known: KnownKey | undefined, answered: { requestId: string; status: number; errorCode: string | null; durationMs: number; fault?: string | undefined; ignoredFields?: string[] | undefined }, response: string): void {
  const apiKey = known?.apiKey
  const entry: RequestLogEntry = {
    request_id: answered.requestId,
    at: new Date().toISOString(),
    key: apiKey ? services.maskKey(apiKey) : null,
    method: event.req.method,
    path: clipLoggedText(event.url.pathname),
    status: answered.status,
    error_code: answered.errorCode,
    idempotency_key: clipLoggedText(event.req.headers.get('idempotency-key')),
    duration_ms: Math.round(answered.durationMs * 100) / 100,
    // Only on faulted requests: without --faults an entry is as it ever was.
    ...(answered.fault === undefined ? {} : { fault: answered.fault }),
    ...(answered.ignoredFields === undefined ? {} : { ignored_fields: answered.ignoredFields }),
  }
  if (known) services.requestLog.record(known.keyId, entry)
  if (!services.onRequest) return
  if (!services.logBodies) return services.onRequest(entry)
  // Bodies go to the live log only: the stored per-key log keeps its fixed-size entries.
  const requestBody = readLoggedBody(event)
  services.onRequest({ ...entry, ...(requestBody ? { request_body: requestBody } : {}), response_body: response })
}
