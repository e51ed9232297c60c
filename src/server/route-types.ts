import type { ApiError } from './api-error.js'
import type { Principal } from './auth.js'
import type { AnswerParts } from './loan-state-json.js'
import type { SandboxServices } from './services.js'
import type { SessionDoc } from './session-doc.js'

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
  /**
   * Does slow work that needs no state (a DNS lookup) before the key's lock is taken, so that the
   * key's other writes do not wait for it; what it resolves to reaches `execute` as `prepared`.
   * Never rejects: an error belongs in `execute`, after the replay check.
   */
  prepare?(body: unknown, ctx: RouteContext): Promise<unknown>
  /** Applies the change to the document; returns the new document and the answer body. */
  execute(doc: SessionDoc, input: unknown, ctx: RouteContext, prepared?: unknown): WriteResult | Promise<WriteResult>
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
  /** The answer stored under the request's Idempotency-Key, given again: nothing ran. */
  replayed?: boolean
}
