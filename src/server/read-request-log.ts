import type { SandboxStorage } from '../storage/sandbox-storage.js'
import { deriveKeyId } from './auth.js'
import { SetupError } from '../errors/setup-error.js'
import { HEAD_BUCKETS, HEAD_KEY, isBucketKey, listBuckets, type RequestLogEntry, type StoredEntry } from './request-log.js'

/**
 * Buckets asked for at once (storage.getItems): one MGET on redis; on fs the files are read one
 * after another. Opened all at once, a log of 100,000 one-entry buckets (a key paced by the rate
 * limit sends about one request per flush) failed with EMFILE.
 */
const READ_BATCH = 256

/**
 * Reads between two full listings of the log: 30 s at `sandbox logs --follow`'s 500 ms. The head
 * names every new bucket, but one written just before its server was killed, or while the head
 * could not be written, is in the log and not in a head.
 */
const READS_PER_LISTING = 60

/** Which entries a reader returns: all, or one key's, named by the key or by its masked form (as entries show it). */
export interface RequestLogFilter {
  apiKey?: string
  maskedKey?: string
}

/** The contents of `buckets` (at most READ_BATCH), in their order; null for one not stored. */
async function readBuckets(storage: SandboxStorage, buckets: string[]): Promise<Array<StoredEntry[] | null>> {
  const read = await storage.getItems(buckets)
  return read.map(({ value }) => (value ?? null) as StoredEntry[] | null)
}

/** The bucket names the server's head holds, oldest first; undefined without one (a server of an earlier version). */
async function readHead(storage: SandboxStorage): Promise<string[] | undefined> {
  const head = await storage.getItem<{ buckets?: unknown }>(HEAD_KEY)
  const names = head?.buckets
  return Array.isArray(names) && names.every(isBucketKey) ? names : undefined
}

/** Reads a request log as it grows (made by followRequestLog). */
export interface RequestLogFollower {
  /** The entries of the buckets written since the last read (the first read: every stored entry), oldest first. */
  read(): Promise<RequestLogEntry[]>
  /** The same as read(), in batches as they are read: a long log's first lines print at once. */
  readBatches(): AsyncIterable<RequestLogEntry[]>
}

/**
 * Follows the stored request log, as `sandbox logs --follow` does: each entry is returned once,
 * by the first read after its bucket is stored. A read looks at the server's head (the newest
 * bucket names) rather than listing the log, unless more buckets were written since the last
 * read than the head names.
 */
export function followRequestLog(storage: SandboxStorage, filter: RequestLogFilter & { tail?: number; readsPerListing?: number } = {}): RequestLogFollower {
  const keyId = filter.apiKey ? deriveKeyId(filter.apiKey) : undefined
  const masked = filter.maskedKey
  // The key whose entries the masked form picked: two keys can share a masked form
  // (sk_sandbox_part…0001), and their entries, mixed, would read as one key's.
  let maskedKeyId: string | undefined
  const readsPerListing = filter.readsPerListing ?? READS_PER_LISTING
  // Buckets read. A server's checkpoints can store a newer bucket before an older one, so a set
  // rather than a position.
  const seen = new Set<string>()
  // The newest bucket read or listed: the head is a run of the newest names, so when its first
  // is no newer than this, no bucket between them was missed.
  let newest = ''
  let readsSinceListing = Infinity

  async function listUnseen(): Promise<string[]> {
    readsSinceListing = 0
    const listed = await listBuckets(storage)
    // A bucket rolled off never comes back (names only grow): forgotten, so a follower left on
    // for days holds what the log holds, not every bucket the server has written since it began.
    const current = new Set(listed)
    for (const bucket of seen) if (!current.has(bucket)) seen.delete(bucket)
    const last = listed[listed.length - 1]
    if (last !== undefined && last > newest) newest = last
    return listed.filter((bucket) => !seen.has(bucket))
  }

  async function findUnseen(): Promise<string[]> {
    if (readsSinceListing >= readsPerListing) return listUnseen()
    readsSinceListing++
    const head = await readHead(storage)
    if (!head || (head.length >= HEAD_BUCKETS && head[0]! > newest)) return listUnseen()
    return head.filter((bucket) => !seen.has(bucket))
  }

  /** The entries of `buckets` that pass the filter, in order; each bucket stored is marked read. */
  async function readEntries(buckets: string[]): Promise<RequestLogEntry[]> {
    const contents = await readBuckets(storage, buckets)
    const entries: RequestLogEntry[] = []
    contents.forEach((bucket, at) => {
      // Named by the head but not stored yet: read once it is.
      if (bucket === null) return
      const name = buckets[at]!
      seen.add(name)
      if (name > newest) newest = name
      // A bucket of another shape (not this version's list of entries) is skipped, not a crash.
      for (const { key_id, ...entry } of Array.isArray(bucket) ? bucket : []) {
        if (keyId && key_id !== keyId) continue
        if (masked && entry.key !== masked) continue
        if (masked && (maskedKeyId ??= key_id) !== key_id) {
          throw new SetupError(`${masked} is the masked form of more than one key in this request log: give the whole key`)
        }
        entries.push(entry)
      }
    })
    return entries
  }

  /**
   * The last `tail` entries of the log, reading buckets from the newest back only until that many
   * pass the filter: `sandbox logs --tail 20` on a log of 100,000 buckets opens a handful. The
   * older buckets count as read.
   */
  async function readTail(tail: number): Promise<RequestLogEntry[]> {
    const buckets = await listUnseen()
    let found: RequestLogEntry[] = []
    let end = buckets.length
    while (end > 0 && found.length < tail) {
      // Small steps first: the last few buckets usually hold `tail` entries.
      const start = Math.max(0, end - Math.min(READ_BATCH, Math.max(32, tail)))
      found = [...(await readEntries(buckets.slice(start, end))), ...found]
      end = start
    }
    for (const bucket of buckets.slice(0, end)) seen.add(bucket)
    return tail === 0 ? [] : found.slice(-tail)
  }

  let first = true
  async function* readBatches(): AsyncIterable<RequestLogEntry[]> {
    if (first && filter.tail !== undefined) {
      first = false
      yield await readTail(filter.tail)
      return
    }
    first = false
    const buckets = await findUnseen()
    for (let start = 0; start < buckets.length; start += READ_BATCH) yield await readEntries(buckets.slice(start, start + READ_BATCH))
  }

  async function read(): Promise<RequestLogEntry[]> {
    const entries: RequestLogEntry[] = []
    for await (const batch of readBatches()) entries.push(...batch)
    return entries
  }

  return { read, readBatches }
}

/** Reads the stored request log, oldest first: one key's entries when `apiKey` is given, else all; the last `limit` of them when given. */
export async function readRequestLog(storage: SandboxStorage, options: { apiKey?: string; limit?: number } = {}): Promise<RequestLogEntry[]> {
  return followRequestLog(storage, { apiKey: options.apiKey, tail: options.limit || undefined }).read()
}
