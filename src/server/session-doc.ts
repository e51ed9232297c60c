import type { LoanBook, SandboxEvent } from '../domain/types.js'
import type { WebhookState } from '../webhooks/types.js'
import type { Principal } from './auth.js'
import type { AnswerParts } from './loan-state-json.js'

/** How long an Idempotency-Key is remembered (decisions.md "Idempotency"). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000

/** The session document version this sandbox reads and writes (a newer one is refused, not rewritten). */
export const SESSION_DOC_VERSION = 1

/** A change to a session document that `patch` keeps in memory until the next write. */
export type SessionPatch = (doc: SessionDoc) => SessionDoc

/** One remembered Idempotency-Key: what it fingerprinted and what it answered. */
export interface IdempotencyRecord {
  key: string
  fingerprint: string
  status: number
  created_at: string
  /** The request that used the key first (records written before it was kept have none). */
  request_id?: string
  /**
   * The stored answer body while it is still inline (moved to batch `batch` later): its JSON text
   * as the request made it, or, read back from storage, the object that text parses to. The
   * document holds it as JSON, not as a string (see session-json.ts).
   */
  answer?: string | Record<string, unknown>
  /** The same as JSON text in a string, as documents written before `answer` hold it. */
  response?: string
  /** ... or, for a loan-state answer, its parts (see AnswerParts), inline or moved the same way. */
  parts?: AnswerParts
  /** Documents of earlier versions only: the batch file holding the answer of this record. */
  batch?: number
}

/**
 * A batch file of idempotency records moved out of the document (idempotency-batches.ts).
 * `keys` indexes the keys it holds; batches of earlier versions have none (their records stay
 * in the document, each with its `batch`, and the file holds only the answers).
 */
export interface ResponseBatch {
  id: number
  /** When its newest record was made: the whole batch expires after that plus retention. */
  newest_at: string
  keys?: string
}

/**
 * Everything one key's sandbox session holds, written as ONE document so that a state change,
 * the events it produced and the idempotency record of the request that made it are committed
 * together by a single atomic write.
 */
export interface SessionDoc {
  version: typeof SESSION_DOC_VERSION
  created_at: string
  book: LoanBook
  /** Partner profile fields set through POST /partner; null until then. */
  partner: Record<string, unknown> | null
  /** Events not yet handed to webhook delivery, oldest first. */
  outbox: SandboxEvent[]
  /** The webhook endpoint and the delivery log. */
  webhook: WebhookState
  event_seq: number
  idempotency: IdempotencyRecord[]
  response_batches: ResponseBatch[]
  next_batch: number
}

/**
 * A session's slot, `<key id>:<session id>`: the id of its document, and the key its writes are
 * serialized under (the request pipeline and the webhook dispatcher share the mutex by it).
 */
export function sessionSlotOf(principal: Pick<Principal, 'keyId' | 'sessionId'>): string {
  return `${principal.keyId}:${principal.sessionId}`
}

/** The principal of a slot, without the API key (which the slot does not hold). */
export function principalOfSlot(slot: string): Principal {
  const [keyId, sessionId] = slot.split(':') as [string, string]
  return { apiKey: '', keyId, sessionId }
}

/**
 * The newest record of an Idempotency-Key that the document itself lists, live or not (see
 * `find` in idempotency-batches.ts, which also looks in batch files and checks expiry).
 */
export function findListedRecord(doc: SessionDoc, key: string): IdempotencyRecord | undefined {
  for (let i = doc.idempotency.length - 1; i >= 0; i--) {
    const record = doc.idempotency[i]!
    if (record.key === key) return record
  }
  return undefined
}
