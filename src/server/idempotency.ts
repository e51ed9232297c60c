import { createHash } from 'node:crypto'
import type { H3Event } from 'h3'
import { ApiError, toApiError } from './api-error.js'
import { parseJsonBody, readRawBody } from './body.js'
import { canonicalJson } from './canonical-json.js'
import { hasRecordRuns } from './loan-state-json.js'
import type { RouteAnswer, RouteContext, WriteResult, WriteRoute } from './route-types.js'
import { sessionSlotOf, type IdempotencyRecord, type SessionDoc } from './session-doc.js'
import { findIgnoredFields } from '../schemas/parse-body.js'
import { hintMisspeltField } from '../schemas/misspelt-field.js'
import { SandboxError } from '../errors/sandbox-error.js'
import { announceIgnoredFields } from './ignored-fields.js'
import { countHeaderLines } from './header-lines.js'

const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/

/** Reads and checks the Idempotency-Key header (decisions.md: 1 to 255 printable ASCII). */
function readIdempotencyKey(event: H3Event): string {
  // Sent twice, the two arrive joined ("a, b"), a valid key that neither a retry sending one of
  // them nor one sending both in the other order would find again.
  const lines = countHeaderLines(event, 'idempotency-key')
  if (lines > 1) {
    throw new ApiError('INVALID_REQUEST', `The Idempotency-Key header came ${lines} times; send it once, with one key per operation.`, { field: 'Idempotency-Key', issue: 'repeated' })
  }
  const key = event.req.headers.get('idempotency-key')
  if (key === null || key === '') {
    throw new ApiError('IDEMPOTENCY_KEY_REQUIRED', 'Every POST needs an Idempotency-Key header (a new UUID per operation; the same one when retrying it).')
  }
  if (!KEY_FORMAT.test(key)) {
    throw new ApiError('INVALID_REQUEST', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', { field: 'Idempotency-Key', issue: 'format' })
  }
  return key
}

/** Same method, path and canonical body give the same fingerprint; no body is `{}`, as it is read. */
export function fingerprintRequest(method: string, path: string, body: unknown): string {
  return hashRequest(method, path, body ?? {})
}

function hashRequest(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body)}`).digest('hex')
}

/**
 * Whether a stored record was made by this request. Servers before no body counted as `{}` stored a
 * request with no body under the fingerprint of `null`: its replay, within the 24 hours a record is
 * kept, must still find it after an upgrade, whether it is sent with no body or with `{}`.
 */
export function isSameRequest(stored: string, fingerprint: string, method: string, path: string, body: unknown): boolean {
  if (stored === fingerprint) return true
  return (body === undefined || canonicalJson(body) === '{}') && stored === hashRequest(method, path, null)
}

/**
 * Answers worth remembering: the outcome of an operation that ran. 400 validation errors, 401,
 * 429 and 5xx are not stored, so a corrected retry can reuse the key.
 */
function isStoredStatus(status: number): boolean {
  return status < 300 || status === 404 || status === 409
}

/**
 * The conflict of a key already used for another request; FIRST, that request's record, names it
 * (its request_id and time), to be found in `sandbox logs` and the partner's own logs.
 */
function conflict(first?: IdempotencyRecord): ApiError {
  const details = first ? { first_request_id: first.request_id ?? null, first_used_at: first.created_at } : undefined
  return new ApiError('IDEMPOTENCY_KEY_CONFLICT', 'This Idempotency-Key was already used with another method, path or body; use a new key for a new operation.', details)
}

/** Keys whose first request is still running, per session, with the fingerprint they carry. */
const inFlight = new WeakMap<object, Map<string, string>>()

/** Appends `"idempotency_replayed": <flag>` to a stored JSON object text. */
function withReplayFlag(json: string, replayed: boolean): string {
  return `${json.slice(0, -1)}${json.length > 2 ? ',' : ''}"idempotency_replayed":${replayed}}`
}

function replay(status: number, stored: string): RouteAnswer {
  const errorCode = status >= 400 ? (/"error_code":"([A-Z_]+)"/.exec(stored)?.[1] ?? null) : null
  return { status, bodyJson: withReplayFlag(stored, true), headers: { 'idempotent-replayed': 'true' }, errorCode, replayed: true }
}

/**
 * Runs a state-changing POST exactly once per (API key, Idempotency-Key). Requests of one
 * session are serialized; the new state, its events and the stored answer are committed in one
 * atomic document write, so a crash either applied the operation and remembers it, or did neither.
 */
export async function runIdempotent(event: H3Event, route: WriteRoute, ctx: RouteContext): Promise<RouteAnswer> {
  const { services, principal } = ctx
  if (route.idempotent === false) return runUnkeyed(event, route, ctx)
  const key = readIdempotencyKey(event)
  const body = parseJsonBody(await readRawBody(event))
  const fingerprint = fingerprintRequest(event.req.method, event.url.pathname, body)
  const sessionSlot = sessionSlotOf(principal)

  let running = inFlight.get(services)
  if (!running) inFlight.set(services, (running = new Map()))
  const slot = `${sessionSlot}\n${key}`
  const other = running.get(slot)
  if (other !== undefined) {
    if (other !== fingerprint) throw conflict()
    throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS', 'A request with this Idempotency-Key is still being processed; retry later with the same key and body.')
  }
  running.set(slot, fingerprint)
  try {
    const prepared = await prepareOutsideLock(route, body, ctx)
    return await services.mutex.run(sessionSlot, async () => {
      const now = Date.now()
      const doc = await services.sessions.load(principal)
      const record = await services.sessions.findIdempotencyRecord(principal, doc, key, now)
      if (record) {
        if (!isSameRequest(record.fingerprint, fingerprint, event.req.method, event.url.pathname, body)) throw conflict(record)
        return replay(record.status, await services.sessions.readStoredResponse(principal, record, doc.book))
      }
      const outcome = await execute(route, doc, body, ctx, prepared)
      // Serialized once: the same text is stored for replays and sent now.
      const fields = outcome.bodyFields
      const response = outcome.bodyJson ?? (fields !== undefined ? `{${fields}}` : JSON.stringify(outcome.body))
      const kept = outcome.parts && hasRecordRuns(outcome.parts) ? { parts: outcome.parts } : { answer: response }
      const stored: SessionDoc = {
        ...outcome.doc,
        idempotency: [...outcome.doc.idempotency, { key, fingerprint, status: outcome.status, created_at: new Date(now).toISOString(), request_id: ctx.requestId, ...kept }],
      }
      await commit(ctx, stored, now, doc)
      const errorCode = outcome.errorCode ?? null
      const told = announceIgnoredFields(outcome.ignored)
      if (outcome.status >= 300) return { status: outcome.status, bodyJson: response, errorCode, ...told }
      if (fields !== undefined) return { status: outcome.status, bodyFields: `${fields}${fields === '' ? '' : ','}"idempotency_replayed":false`, errorCode, ...told }
      return { status: outcome.status, bodyJson: withReplayFlag(response, false), errorCode, ...told }
    })
  } finally {
    running.delete(slot)
  }
}

/**
 * Saves a session document (`base` is the version it was made from): its new events become
 * webhook deliveries in the same write, and once the write is durable the dispatcher is woken if
 * the change gave it something to do now. A write that failed may still be carried out (a redis
 * answering after the command timeout), so the dispatcher is told of that too, and the session's
 * marker for a restart is written along with the document rather than after it.
 */
async function commit(ctx: RouteContext, doc: SessionDoc, now: number, base: SessionDoc): Promise<void> {
  const { services, principal } = ctx
  const { dispatcher } = services
  const written = dispatcher.prepareWrite(principal, doc, base.webhook, now, ctx.requestId)
  const marking = dispatcher.markBeforeWrite(principal, base.webhook, written.doc.webhook)
  try {
    await services.sessions.save(principal, written.doc, now)
  } catch (error) {
    dispatcher.recheckAfterFailedWrite(principal, base.webhook, written.doc.webhook)
    throw error
  } finally {
    // Never rejects (a failed marker write is logged and written again later).
    await marking
  }
  dispatcher.committed(principal, base.webhook, written)
}

/** A state-changing request without Idempotency-Key (DELETE): serialized and committed, not remembered. */
async function runUnkeyed(event: H3Event, route: WriteRoute, ctx: RouteContext): Promise<RouteAnswer> {
  const body = parseJsonBody(await readRawBody(event))
  const { services, principal } = ctx
  const prepared = await prepareOutsideLock(route, body, ctx)
  return services.mutex.run(sessionSlotOf(principal), async () => {
    const now = Date.now()
    const doc = await services.sessions.load(principal)
    const input = route.parse(body)
    const result = await route.execute(doc, input, ctx, prepared)
    if (result.doc !== doc) await commit(ctx, result.doc, now, doc)
    return { status: 200, body: result.body, ...announceIgnoredFields(findIgnoredFields(body, input)) }
  })
}

/**
 * Runs the route's `prepare` under a lock of its own request, not the key's: the key's other
 * writes go on meanwhile, and the sandbox's close(), which waits for the mutex to be idle, still
 * waits for it (it resolved during a slow lookup, and the request then wrote to closed storage).
 */
function prepareOutsideLock(route: WriteRoute, body: unknown, ctx: RouteContext): Promise<unknown> {
  if (!route.prepare) return Promise.resolve(undefined)
  return ctx.services.mutex.run(`prepare\n${ctx.requestId}`, () => route.prepare!(body, ctx))
}

async function execute(route: WriteRoute, doc: SessionDoc, body: unknown, ctx: RouteContext, prepared: unknown): Promise<WriteResult & { status: number; errorCode?: string; ignored: string[] }> {
  let ignored: string[] = []
  try {
    const input = route.parse(body)
    ignored = findIgnoredFields(body, input)
    const result = await route.execute(doc, input, ctx, prepared)
    return { status: 200, ...result, ignored }
  } catch (error) {
    const api = toApiError(error)
    // A 400 is not stored: it may name the misspelt field behind it (a parse error already does).
    if (api && !isStoredStatus(api.status) && error instanceof SandboxError) throw hintMisspeltField(error, ignored)
    if (!api || !isStoredStatus(api.status)) throw error
    // A rejected step (404, 409) is an outcome too: remembered so a retry answers the same.
    return { status: api.status, body: api.toBody(), doc, errorCode: api.code, ignored }
  }
}
