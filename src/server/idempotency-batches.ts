import type { LoanBook } from '../domain/types.js'
import type { guardStorage } from '../storage/storage-error.js'
import { StorageError } from '../storage/storage-error.js'
import { stringifyOnce } from '../storage/json-memo.js'
import type { Principal } from './auth.js'
import { joinAnswerParts, type AnswerParts } from './loan-state-json.js'
import { findListedRecord, IDEMPOTENCY_RETENTION_MS, type IdempotencyRecord, type ResponseBatch, type SessionDoc } from './session-doc.js'

/**
 * Idempotency records kept inside the session document before they move, answers and all, to a
 * batch file. The document then keeps of each batch only `newest_at` and an index of its keys
 * (KEY_HASH_CHARS each): every save rewrites the document, and a key at the default rate limit
 * (120 POST/min) makes 172,800 records in the 24 hours they are kept. Measured in-process on memory
 * storage (createSandbox, rate limit off) after 20,000 POSTs of one key: the document went from
 * 3.39 MB to 0.23 MB (~12 B a record, its index entry, instead of ~170 B of metadata), and a POST
 * with a new key from 3.9-4.5 ms to 0.32 ms. The index still grows with the records it covers:
 * ~2 MB after a day at 120 POST/min.
 */
const INLINE_RESPONSES = 16
/**
 * ... or fewer when they are large: every save rewrites the document, so a key with many loans
 * (answers of tens of KB) would otherwise rewrite and re-serialize hundreds of KB per request.
 */
const INLINE_RESPONSE_CHARS = 64 * 1024
/**
 * A key's entry in a batch index: 32 bits of FNV-1a in hex. A new key matches some entry with
 * probability records/2^32 (under 0.005% at a day's 172,800), and a match only costs one read.
 */
const KEY_HASH_CHARS = 8

type StorageFiles = ReturnType<typeof guardStorage>

/** A stored answer held by a record or a batch file: text, or loan-state parts. */
type StoredAnswer = string | AnswerParts

function batchKey(principal: Pick<Principal, 'keyId' | 'sessionId'>, batch: number): string {
  return `idem:${principal.keyId}:${principal.sessionId}:${batch}`
}

/** The index entry of an Idempotency-Key (FNV-1a, 32 bits): cheap, and keys are at most 255 characters. */
export function hashIdempotencyKey(key: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193)
  return (hash >>> 0).toString(16).padStart(KEY_HASH_CHARS, '0')
}

/** Whether an index holds `hash` at an entry boundary (a match across two entries is no match). */
function indexHolds(index: string, hash: string): boolean {
  for (let at = index.indexOf(hash); at !== -1; at = index.indexOf(hash, at + 1)) {
    if (at % KEY_HASH_CHARS === 0) return true
  }
  return false
}

function storedAnswerOf(record: IdempotencyRecord): StoredAnswer | undefined {
  const { answer } = record
  // Written by JSON.stringify and parsed back, the object gives back the very text it was made from.
  if (answer !== undefined) return typeof answer === 'string' ? answer : stringifyOnce(answer)
  return record.response ?? record.parts
}

function sumLengths(records: IdempotencyRecord[]): number {
  let total = 0
  for (const record of records) {
    const answer = storedAnswerOf(record)
    if (typeof answer === 'string') total += answer.length
    else for (const part of answer ?? []) total += typeof part === 'string' ? part.length : 24
  }
  return total
}

/** A record as a batch file holds it: the answer as text (or parts), whatever form it had inline. */
function toBatchedRecord(record: IdempotencyRecord): IdempotencyRecord {
  const { key, fingerprint, status, created_at, request_id } = record
  const kept = { key, fingerprint, status, created_at, ...(request_id === undefined ? {} : { request_id }) }
  const answer = storedAnswerOf(record)
  return typeof answer === 'string' ? { ...kept, answer } : { ...kept, parts: answer }
}

/**
 * When the document's first idempotency record (inline or in a batch) passes retention, in ms
 * since the epoch: Infinity when it holds none (or only times it cannot read, which never expire).
 */
export function findFirstExpiry(doc: SessionDoc): number {
  // Both lists are oldest first: their heads expire first.
  const record = doc.idempotency[0]
  const batch = doc.response_batches[0]
  let first = Infinity
  for (const made of [record?.created_at, batch?.newest_at]) {
    const at = made === undefined ? NaN : Date.parse(made) + IDEMPOTENCY_RETENTION_MS
    if (at < first) first = at
  }
  return first
}

/**
 * Whether the document holds an idempotency record (inline or in a batch) past retention, which
 * its next save would prune.
 */
export function holdsExpiredRecords(doc: SessionDoc, now: number): boolean {
  return findFirstExpiry(doc) <= now
}

/**
 * The batch files of stored idempotency records. Batches written by earlier versions (no `keys`
 * index in the document) map each key to its answer, and their records stay in the document,
 * pointing at them, until they expire; batches written now hold whole records.
 */
export function createIdempotencyBatches(files: StorageFiles) {
  /**
   * Moves the records with inline answers into a new batch file once there are too many or they
   * are too large (`doc` is the version about to be written, pruned).
   */
  async function spill(principal: Principal, doc: SessionDoc): Promise<SessionDoc> {
    const inline = doc.idempotency.filter((record) => storedAnswerOf(record) !== undefined)
    if (inline.length <= INLINE_RESPONSES && (inline.length <= 1 || sumLengths(inline) <= INLINE_RESPONSE_CHARS)) return doc
    const batch = doc.next_batch
    // The batch file is written before the document that points at it: a crash in between
    // leaves the records inline and the batch number reused next time.
    await files.setItem(batchKey(principal, batch), inline.map(toBatchedRecord))
    const entry: ResponseBatch = { id: batch, newest_at: inline[inline.length - 1]!.created_at, keys: inline.map((record) => hashIdempotencyKey(record.key)).join('') }
    return {
      ...doc,
      // What stays is records of earlier versions' batches, until they expire.
      idempotency: doc.idempotency.filter((record) => storedAnswerOf(record) === undefined),
      response_batches: [...doc.response_batches, entry],
      next_batch: batch + 1,
    }
  }

  /** Drops records past retention, and batches whose newest record is (deleting their files). */
  function prune(principal: Principal, doc: SessionDoc, now: number): SessionDoc {
    const cutoff = now - IDEMPOTENCY_RETENTION_MS
    // Both lists are in the order they were made, oldest first: only their expired heads are read.
    const first = doc.idempotency.findIndex((record) => Date.parse(record.created_at) > cutoff)
    const idempotency = first === -1 ? [] : first === 0 ? doc.idempotency : doc.idempotency.slice(first)
    let live = 0
    while (live < doc.response_batches.length && Date.parse(doc.response_batches[live]!.newest_at) <= cutoff) {
      files.removeItem(batchKey(principal, doc.response_batches[live]!.id)).catch(() => {})
      live++
    }
    const response_batches = live === 0 ? doc.response_batches : doc.response_batches.slice(live)
    return idempotency === doc.idempotency && response_batches === doc.response_batches ? doc : { ...doc, idempotency, response_batches }
  }

  async function readBatch(principal: Principal, batch: number): Promise<IdempotencyRecord[]> {
    const records = await files.getItem<IdempotencyRecord[]>(batchKey(principal, batch))
    if (!Array.isArray(records)) throw new StorageError(`stored idempotency records of batch ${batch} of the session are missing`)
    return records
  }

  /**
   * The live record of an Idempotency-Key: the newest one, in the document or in a batch whose
   * index holds the key (newest batch first). A new key reads no batch unless a hash collides.
   */
  async function find(principal: Principal, doc: SessionDoc, key: string, now: number): Promise<IdempotencyRecord | undefined> {
    const cutoff = now - IDEMPOTENCY_RETENTION_MS
    // Records in the document are newer than any batch that holds whole records (legacy ones older).
    let record = findListedRecord(doc, key)
    if (!record) {
      const hash = hashIdempotencyKey(key)
      for (let i = doc.response_batches.length - 1; i >= 0 && !record; i--) {
        const batch = doc.response_batches[i]!
        if (batch.keys === undefined || !indexHolds(batch.keys, hash) || Date.parse(batch.newest_at) <= cutoff) continue
        record = (await readBatch(principal, batch.id)).findLast((item) => item.key === key)
      }
    }
    // A key used again after expiry has its older record pruned, or in an older batch.
    return record && Date.parse(record.created_at) > cutoff ? record : undefined
  }

  /**
   * The stored answer body (JSON text) of a record: its own, or (records of earlier versions) in
   * the batch it points at; `book` is the session's book now, which loan-state parts are read against.
   */
  async function readAnswer(principal: Principal, record: IdempotencyRecord, book: LoanBook): Promise<string> {
    let answer = storedAnswerOf(record)
    if (answer === undefined) {
      const bodies = await files.getItem<Record<string, StoredAnswer>>(batchKey(principal, record.batch ?? 0))
      answer = bodies?.[record.key]
    }
    if (typeof answer === 'string') return answer
    if (Array.isArray(answer)) return joinAnswerParts(answer, book)
    throw new StorageError(`stored response of Idempotency-Key ${JSON.stringify(record.key)} is missing from batch ${record.batch}`)
  }

  return { spill, prune, find, readAnswer }
}
