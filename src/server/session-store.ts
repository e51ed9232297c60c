import type { SandboxStorage } from '../storage/sandbox-storage.js'
import type { Balances, SandboxConfig } from '../domain/types.js'
import { createLoanBook, revalueActiveLoans } from '../domain/loan-book.js'
import { createDocStore } from '../storage/doc-store.js'
import { guardStorage } from '../storage/storage-error.js'
import { createWebhookState } from '../webhooks/deliveries.js'
import { spillDeliveries } from '../webhooks/delivery-spill.js'
import type { Principal } from './auth.js'
import { ApiError } from './api-error.js'
import { checkSessionDoc } from './check-session-doc.js'
import { deleteStoredSession, listSessionBatches } from './delete-session.js'
import { createExpiryTimes } from './expiry-times.js'
import { createIdempotencyBatches, holdsExpiredRecords } from './idempotency-batches.js'
import { stringifySessionDoc } from './session-json.js'
import { sessionSlotOf, principalOfSlot, SESSION_DOC_VERSION, type SessionDoc, type SessionPatch } from './session-doc.js'
import { createSpilledDeliveries, spillKey } from './spilled-deliveries.js'

/**
 * Parsed session documents kept in memory: enough for every key of a 50-connection load, while the
 * memory driver already holds every document as text.
 */
const SESSION_CACHE_SIZE = 200

/**
 * Loads and saves session documents. Saving prunes idempotency records past retention and moves
 * older ones, with their stored answers, into batch files (idempotency-batches.ts), so the
 * document a request rewrites stays small however many requests a key has made.
 */
export function createSessionStore(storage: SandboxStorage, options: { initialBalances: Balances; config: SandboxConfig; cacheSize?: number }) {
  const docs = createDocStore<SessionDoc>(storage, {
    prefix: 'session',
    cacheSize: options.cacheSize ?? SESSION_CACHE_SIZE,
    stringify: stringifySessionDoc,
    checkDocument: checkSessionDoc,
    recovery: "to start that key's session again from an empty state",
    prepare: prepareStoredDoc,
  })
  const files = guardStorage(storage)
  const batches = createIdempotencyBatches(files)
  const { readSpilled, listSpilled, removeSpilled } = createSpilledDeliveries(files)
  /** What the expiry check knows of each session's records, kept by every change made here. */
  const expiryTimes = createExpiryTimes()

  function createSessionDoc(now: string): SessionDoc {
    return {
      version: SESSION_DOC_VERSION,
      created_at: now,
      book: createLoanBook({ ...options.initialBalances }),
      partner: null,
      outbox: [],
      webhook: createWebhookState(),
      event_seq: 0,
      idempotency: [],
      response_batches: [],
      next_batch: 1,
    }
  }

  /**
   * Changes kept in memory per session until its next write (see `patch`): applied to the version
   * held in memory at once, and to the stored one whenever it is read again. Only reads of storage
   * look here, so a load served from memory costs no lookup however many sessions are patched.
   */
  const patches = new Map<string, SessionPatch[]>()

  /**
   * Sessions this server deleted (`remove`). Session ids are never reused, and a request
   * authenticated just before its session ended may still be waiting for the session's mutex:
   * its write would store the ended session again, where no key can reach it.
   */
  const ended = new Set<string>()

  /** A document as storage holds it, made current before the cache or any request sees it. */
  function prepareStoredDoc(stored: SessionDoc): SessionDoc {
    // Documents written before webhooks existed have no webhook part yet.
    const doc = stored.webhook ? stored : { ...stored, webhook: createWebhookState() }
    // Config is read at start, so a document read from storage is the first this server sees of it.
    const book = revalueActiveLoans(doc.book, options.config)
    return book === doc.book ? doc : { ...doc, book }
  }

  /** The session's document, or a fresh one (not yet stored) on a key's first use. */
  async function load(principal: Principal): Promise<SessionDoc> {
    const id = sessionSlotOf(principal)
    const held = docs.peek(id)
    if (held) return held
    const stored = await docs.read(id)
    // A write that landed while storage was read put a newer version in memory, patches included.
    const current = docs.peek(id)
    if (current !== undefined && current !== stored) return current
    if (!stored) return createSessionDoc(new Date().toISOString())
    let doc = stored
    const pending = patches.get(id)
    if (pending) doc = pending.reduce((current, change) => change(current), doc)
    // What is held in memory from now on is the document as loaded, so `peek` needs no more work.
    if (doc !== stored) docs.replace(id, doc)
    return doc
  }

  /** Writes the document atomically after pruning and spilling stored responses. */
  async function save(principal: Principal, doc: SessionDoc, now = Date.now()): Promise<void> {
    if (ended.has(sessionSlotOf(principal))) {
      throw new ApiError('SANDBOX_SESSION_REQUIRED', 'The sandbox session of this key was deleted while the request waited; recreate it with "sandbox keys reset KEY".')
    }
    // A copy of its own: its webhook part may be replaced below.
    const next = { ...(await batches.spill(principal, batches.prune(principal, doc, now))) }
    const spill = spillDeliveries(next.webhook)
    if (spill.batches.length > 0) {
      // Written before the document that points at them, like the idempotency batches (spill).
      await Promise.all(spill.batches.map(({ batch, deliveries }) => files.setItem(spillKey(principal.keyId, principal.sessionId, batch), deliveries)))
      next.webhook = spill.state
    }
    const id = sessionSlotOf(principal)
    // Unknown until written: a failed write may or may not have landed.
    expiryTimes.forget(id)
    await docs.write(id, next)
    expiryTimes.learn(id, next)
    patches.delete(id)
  }

  /**
   * Keeps a changed document in memory without writing it: for changes a crash may lose
   * harmlessly (a failed webhook attempt is then simply tried again). The session's next save
   * writes it along, or `flushStaged`. Call it under the session's mutex, like `save`.
   */
  function stage(principal: Principal, doc: SessionDoc): void {
    const id = sessionSlotOf(principal)
    docs.stage(id, doc)
    expiryTimes.forget(id)
    patches.delete(id)
  }

  /**
   * Records a change without loading or writing the document: `load` applies it on top of the
   * document until the session's next write, which then holds it (callers write documents they
   * loaded under the mutex, so the patches are in them). For changes a crash may lose
   * harmlessly, like `stage`, but without the cost of reading the document. Call it under the
   * session's mutex.
   */
  function patch(principal: Principal, change: SessionPatch): void {
    const id = sessionSlotOf(principal)
    expiryTimes.forget(id)
    const pending = patches.get(id)
    if (pending) pending.push(change)
    else patches.set(id, [change])
    const held = docs.peek(id)
    if (held) docs.replace(id, change(held))
  }

  /**
   * Keeps the session's document in memory past the cache's size until the returned release is
   * called: a webhook worker's sends wait their turn while other keys' requests go on, and a
   * document read back from storage costs a parse and every memoized text rebuilt at the next save.
   */
  const hold = (principal: Principal): (() => void) => docs.hold(sessionSlotOf(principal))

  /** The sessions with patches not yet written. */
  function listPatched(): Principal[] {
    return [...patches.keys()].map(principalOfSlot)
  }

  /** The sessions with a staged document not yet written. */
  function listStaged(): Principal[] {
    return docs.listStaged().map(principalOfSlot)
  }

  /**
   * Deletes everything stored for a session, and what is held of it in memory (under the
   * session's mutex): the server's side of `sandbox keys reset`.
   */
  async function remove(principal: Principal): Promise<void> {
    const id = sessionSlotOf(principal)
    ended.add(id)
    expiryTimes.forget(id)
    docs.forget(id)
    patches.delete(id)
    await deleteStoredSession(storage, principal)
  }

  /**
   * The stored document of a session nobody uses (`serve --forget-idle-keys`), read past the
   * cache; 'busy' while changes to it wait in memory to be written. Call it under the mutex.
   */
  async function readIdle(principal: Principal): Promise<SessionDoc | null | 'busy'> {
    const id = sessionSlotOf(principal)
    if (patches.has(id) || docs.isStaged(id)) return 'busy'
    return docs.readUncached(id)
  }

  /**
   * Deletes an idle session (`serve --forget-idle-keys`): unlike `remove`, the key may come back,
   * and then starts from an empty state. The document goes first, so a crash (`kill -9`) midway
   * leaves only batch files no document points at, which the next forget of the key deletes.
   * Call it under the session's mutex; `batches` as for deleteStoredSession.
   */
  async function forget(principal: Principal, batches?: string[]): Promise<void> {
    const id = sessionSlotOf(principal)
    expiryTimes.forget(id)
    patches.delete(id)
    await docs.remove(id)
    await deleteStoredSession(storage, principal, batches)
  }

  /** Writes the session's staged document or patches, if it has any (under the session's mutex). */
  async function flushStaged(principal: Principal): Promise<void> {
    const id = sessionSlotOf(principal)
    if (!docs.isStaged(id) && !patches.has(id)) return
    // A session deleted from storage meanwhile (`sandbox keys reset` on a running server) stays
    // deleted: what is held for it in memory is dropped, not written back.
    if (!(await docs.isStored(id))) {
      docs.forget(id)
      patches.delete(id)
      return
    }
    await save(principal, await load(principal))
  }

  /**
   * Writes the session's document again when it holds idempotency records past retention (true
   * then). Its own saves prune them, but a key nobody writes to again kept them, answers and
   * batch files, for good. Call it under the session's mutex.
   */
  async function expireIdempotency(principal: Principal, now = Date.now()): Promise<boolean> {
    const id = sessionSlotOf(principal)
    const settle = expiryTimes.beginRead(id)
    // Read past the cache, which holds the sessions in use, unless changes wait for the next load.
    const doc = patches.has(id) ? await load(principal) : await docs.readUncached(id)
    settle(doc)
    // A session deleted meanwhile has nothing to expire.
    if (!doc || !holdsExpiredRecords(doc, now)) return false
    await save(principal, doc, now)
    return true
  }

  /** The slots (`<key id>:<session id>`) of every stored session. */
  const listSlots = (): Promise<string[]> => docs.listIds()

  /** The idempotency batches and spilled deliveries of every session, by slot. */
  const listBatches = (): Promise<Map<string, string[]>> => listSessionBatches(storage)

  return {
    load, save, stage, patch, hold, remove, readIdle, forget, listStaged, listPatched, flushStaged, readSpilled, listSpilled, removeSpilled, createSessionDoc, expireIdempotency, listSlots, listBatches,
    /**
     * Whether `expireIdempotency` of the slot could find a record past retention at `now`: false
     * only when this server read or wrote the document last and its first record expires later.
     */
    mayHoldExpired: expiryTimes.mayHoldExpired,
    /** Forgets what is known of slots not among `stored` (every stored slot, as just listed). */
    keepExpiryTimesOf: expiryTimes.keepOnly,
    /** The live record of an Idempotency-Key, from the document or a batch file (idempotency-batches.ts). */
    findIdempotencyRecord: batches.find,
    /** The stored answer body (JSON text) of a record; `book` is the session's book now, which loan-state parts are read against. */
    readStoredResponse: batches.readAnswer,
  }
}

/** A store made by createSessionStore. */
export type SessionStore = ReturnType<typeof createSessionStore>

