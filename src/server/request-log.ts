import type { SandboxStorage } from '../storage/sandbox-storage.js'
import { UnwrittenError } from '../storage/unwritten-error.js'
import { deriveKeyId } from './auth.js'

/** One line of the request log (the spec's "partner dashboard" log). */
export interface RequestLogEntry {
  request_id: string
  at: string
  /** The API key, masked; null when the request carried no usable key. */
  key: string | null
  method: string
  path: string
  status: number
  error_code: string | null
  idempotency_key: string | null
  duration_ms: number
  /**
   * The faults `serve --faults` injected (`latency 300ms`, `status 503`, `drop_before`,
   * `drop_after`); absent on requests it left alone. A drop_before's `status` is 0: no answer.
   */
  fault?: string
  /**
   * Top-level body fields the request's route does not know, which it ignored (a misspelt
   * optional field); absent when there were none. At most 10, each at most 64 characters.
   */
  ignored_fields?: string[]
  /**
   * True on a POST answered with the outcome stored under its Idempotency-Key (nothing ran, as
   * the answer's `idempotent-replayed` header says); absent on the request that ran.
   */
  idempotency_replayed?: true
  /**
   * `serve --log-bodies` (createSandbox `logBodies`): the request's body and the answer's, as
   * text, given to `onRequest` only, never stored in the per-key log.
   */
  request_body?: string
  response_body?: string
}

/** `text` cut to MAX_LOGGED_TEXT characters, marked with `…` where it was cut. */
export function clipLoggedText<T extends string | null>(text: T): T {
  return (text !== null && text.length > MAX_LOGGED_TEXT ? `${text.slice(0, MAX_LOGGED_TEXT)}…` : text) as T
}

/** A stored entry: the entry plus the storage id of its key, for filtering by key. */
export interface StoredEntry extends RequestLogEntry {
  key_id: string
}

/** Requests kept across all keys; the oldest buckets roll off past this. */
export const REQUEST_LOG_LIMIT = 100_000
/**
 * With memory storage the log lives in the server's heap and only the library can read it
 * (`sandbox logs` needs fs storage), so it keeps less.
 */
export const MEMORY_REQUEST_LOG_LIMIT = 10_000
/**
 * Longest path or Idempotency-Key kept in an entry. Both come from the client, up to Node's 16 KB
 * header limit, and 404s are not rate limited: unclipped, one key could fill 1.5 GB of disk a
 * minute before the log rolls over. The API's own paths and valid keys are far shorter.
 */
export const MAX_LOGGED_TEXT = 256
const FLUSH_INTERVAL_MS = 500
const PREFIX = 'reqlog'
/**
 * The names of the newest buckets, rewritten after each bucket: `sandbox logs --follow` reads this
 * one small item each poll rather than listing the whole log (a full log is up to 100,000
 * buckets, and listing 20,000 took 190 ms of CPU per poll on fs; on redis it is a SCAN of the
 * whole database).
 */
export const HEAD_KEY = `${PREFIX}:head`
/** Bucket names the head holds: 64 s of flushes at two a second. */
export const HEAD_BUCKETS = 128
/**
 * Buckets are named `<time>-<sequence>-<count>` so they sort by time and retention can count
 * entries without reading them.
 */
function bucketKey(time: number, sequence: number, count: number): string {
  return `${PREFIX}:${String(time).padStart(15, '0')}-${String(sequence).padStart(6, '0')}-${count}`
}

/** The time in a bucket's name. */
function bucketTime(key: string): number {
  return Number(key.slice(PREFIX.length + 1, PREFIX.length + 16)) || 0
}

function bucketCount(key: string): number {
  return Number(key.slice(key.lastIndexOf('-') + 1)) || 0
}

/** A bucket's key as bucketKey makes it; other keys under the prefix are not this version's to read or roll off. */
const BUCKET_KEY = new RegExp(`^${PREFIX}:\\d{15}-\\d{6}-\\d+$`)

/** Whether `key` names a bucket of this version's log. */
export function isBucketKey(key: unknown): key is string {
  return typeof key === 'string' && BUCKET_KEY.test(key)
}

/** Bucket keys in time order. */
export async function listBuckets(storage: SandboxStorage): Promise<string[]> {
  return (await storage.getKeys(PREFIX)).filter(isBucketKey).sort()
}

/**
 * Collects request log entries in memory and writes them as one bucket per flush (every
 * FLUSH_INTERVAL_MS, off the request path): one write however many keys were active, so logging
 * costs the same with one key or thousands.
 */
export function createRequestLog(storage: SandboxStorage, options: { limit?: number } = {}) {
  const limit = options.limit ?? REQUEST_LOG_LIMIT
  let buffer: StoredEntry[] = []
  let sequence = 0
  let buckets: string[] | undefined
  let flushing: Promise<void> | undefined
  let followUp: Promise<void> | undefined
  // The timer skips a tick while a flush writes: queueing one more after it, as flush() does for a
  // caller, would keep flushes back to back whenever a write takes longer than a tick (a slow disk).
  const timer = setInterval(() => void (flushing ?? flush()), FLUSH_INTERVAL_MS)
  timer.unref()

  /** Records one entry for a key (by key id). */
  function record(keyId: string, entry: RequestLogEntry): void {
    buffer.push({ ...entry, key_id: keyId })
  }

  /**
   * A bucket whose write failed, written again under its own name before any newer one: a write
   * that timed out (redis paused) may still reach storage, and its entries under a second name
   * showed each of those requests twice in `sandbox logs`.
   */
  let pending: { key: string; entries: StoredEntry[] } | undefined
  /** Why storage last refused a bucket: what a stop that could not write the last ones reports. */
  let refusal: Error | undefined

  async function writeBucket(): Promise<void> {
    // Only the newest `limit` are held: retention would roll older ones off once written, and
    // while storage is down (redis gone for an hour under load) they grew the heap, then one
    // bucket over the limit.
    if (buffer.length > limit) buffer = buffer.slice(-limit)
    // At most the failed bucket and one new one per flush: a loop until the buffer was empty
    // never ended under steady load, and a stop waiting for the flush waited for the load to end.
    if (pending && !(await writePending())) return
    if (buffer.length === 0) return
    // A listing that failed (storage down at the first flush) is tried again at the next bucket
    // rather than taken as empty: retention counts earlier runs' buckets too, or they never roll off.
    buckets ??= await listBuckets(storage).catch(() => undefined)
    // Named no earlier than the newest bucket, this process's or an earlier one's: with a clock
    // set back, later requests sorted first, so `sandbox logs` showed them before older ones and
    // retention, counting from the oldest name, deleted the newest requests.
    const newest = buckets && buckets.length > 0 ? bucketTime(buckets[buckets.length - 1]!) : 0
    pending = { key: bucketKey(Math.max(Date.now(), newest + 1), sequence++, buffer.length), entries: buffer }
    buffer = []
    await writePending()
  }

  /** Writes the pending bucket; false when storage refused it (kept pending, for the next flush). */
  async function writePending(): Promise<boolean> {
    const bucket = pending!
    try {
      await storage.setItem(bucket.key, bucket.entries)
    } catch (error) {
      refusal = error as Error
      return false
    }
    pending = undefined
    // Not listed yet: this bucket is counted with the others once they are.
    if (buckets) await rollOff(buckets, bucket.key)
    return true
  }

  async function rollOff(known: string[], written: string): Promise<void> {
    if (!known.includes(written)) known.push(written)
    let total = known.reduce((sum, bucket) => sum + bucketCount(bucket), 0)
    while (total > limit && known.length > 1) {
      const oldest = known.shift()!
      total -= bucketCount(oldest)
      await storage.removeItem(oldest).catch(() => {})
    }
    // A head left unwritten costs a follower only time: it lists the log in full every 30 s.
    await storage.setItem(HEAD_KEY, { buckets: known.slice(-HEAD_BUCKETS) }).catch(() => {})
  }

  /** Writes what was recorded since the last flush; resolves once all of it is written. */
  function flush(): Promise<void> {
    if (!flushing) {
      flushing = writeBucket().finally(() => {
        flushing = undefined
      })
      return flushing
    }
    // The flush under way took only what was recorded before it began (the 500 ms timer's, say):
    // resolving with it left a caller's newer entries unwritten. One more follows it for them.
    followUp ??= flushing.catch(() => {}).then(() => {
      followUp = undefined
      return flush()
    })
    return followUp
  }

  /**
   * Stops the timer and writes what is pending; rejects with an UnwrittenError when storage still
   * refuses some of it (redis gone), which is then lost.
   */
  async function close(): Promise<void> {
    clearInterval(timer)
    await flushing
    // One bucket per flush: entries recorded while the last one was written (the final requests
    // of a stop) need another, as long as storage takes them.
    do await flush()
    while (pending === undefined && buffer.length > 0)
    const lost = (pending?.entries.length ?? 0) + buffer.length
    if (lost > 0) throw new UnwrittenError(`${lost} request log ${lost === 1 ? 'entry' : 'entries'}, which sandbox logs will not show`, refusal)
  }

  return { record, flush, close }
}

/** A log made by createRequestLog. */
export type RequestLog = ReturnType<typeof createRequestLog>
