import type { SandboxStorage } from './sandbox-storage.js'
import { resolveStoragePath } from './atomic-fs-driver.js'
import { isBytes } from '../text/is-bytes.js'
import { guardStorage, UnusableDocumentError } from './storage-error.js'

/** JSON documents by id under one prefix, with a write-through LRU cache. */
export interface DocStore<T> {
  read(id: string): Promise<T | null>
  write(id: string, doc: T): Promise<void>
  /**
   * Keeps `doc` as the current version in memory only, until the next write of the id (or a
   * flush by the caller): for changes whose loss in a crash is harmless. Staged documents are
   * never evicted from the cache.
   */
  stage(id: string, doc: T): void
  /** The staged or cached version of a document, without reading storage (and kept as recently used). */
  peek(id: string): T | undefined
  /**
   * Replaces the staged or cached version of a document with `doc`, a change its caller keeps
   * applying on reads from storage until the next write (nothing is written or staged by this).
   * Does nothing if the document is neither staged, cached nor held in memory.
   */
  replace(id: string, doc: T): void
  /**
   * Keeps the document in memory until the returned release is called (holds count), even past the
   * cache's size: for a document its holder reads and writes again shortly, like a webhook worker
   * waiting for a place in flight while thousands of other keys are used.
   */
  hold(id: string): () => void
  /** Whether the id has a staged version not yet written. */
  isStaged(id: string): boolean
  /** The ids with a staged version not yet written. */
  listStaged(): string[]
  remove(id: string): Promise<void>
  /** Whether the document is in storage now, asked of the storage itself (past the cache). */
  isStored(id: string): Promise<boolean>
  /** Drops the cached and staged versions of a document deleted from storage by someone else. */
  forget(id: string): void
  /**
   * The staged or cached version, else the stored one without caching it: for a pass over every
   * document, which would otherwise push the documents in use out of the cache.
   */
  readUncached(id: string): Promise<T | null>
  listIds(): Promise<string[]>
}

/** A stored document as an object, from the text (or bytes) a driver holds; undefined if it is not one. */
function parseDocument(value: unknown): object | undefined {
  if (typeof value === 'object' && !isBytes(value)) return value as object
  const text = isBytes(value) ? Buffer.from(value).toString('utf8') : String(value)
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined
  } catch {
    return undefined
  }
}

/**
 * The error for a stored document that cannot be used. A damaged one's says where it is and what
 * to do: it read "stored document session:<id>:default is not valid JSON", whose file is named
 * otherwise, and the answer advised a retry, which finds the same document.
 */
function createUnusableDocumentError(key: string, problem: string, damaged: boolean, recovery = 'to start again without it'): UnusableDocumentError {
  const advice = damaged ? ` (damaged, or edited by hand): restore it, or delete it (${resolveStoragePath('', key)} in the data dir, sandbox:${key} in redis) ${recovery}` : ''
  return new UnusableDocumentError(`stored document ${key} ${problem}${advice}`)
}

/**
 * Creates a document store. Documents are treated as immutable values: callers build a new
 * object to change one and must not mutate what `read` returns, which lets cached reads skip
 * cloning on the hot path.
 */
export function createDocStore<T extends object>(storage: SandboxStorage, options: {
  prefix: string
  cacheSize?: number
  stringify?: (doc: T) => string
  /**
   * Why a parsed value is not a document this version can use (undefined when it is): not its
   * shape (`damaged`, like bad JSON), or a newer version's. It is then neither used nor rewritten.
   */
  checkDocument?: (value: unknown) => { problem: string; damaged: boolean } | undefined
  /** What deleting a damaged document does, as its log line says (`to start ... again`). */
  recovery?: string
  /**
   * Brings a document read from storage up to date (earlier layouts, the server's config) before
   * it is cached: a caller that did so after `read` left the stored version visible through
   * `peek` to any load in between.
   */
  prepare?: (doc: T) => T
}): DocStore<T> {
  const cacheSize = options.cacheSize ?? 1000
  const cache = new Map<string, T>()
  // Staged documents live apart from the LRU so that eviction never has to step over them.
  const staged = new Map<string, T>()
  /** How many holders each held id has, and the held documents the LRU has let go of. */
  const holders = new Map<string, number>()
  const evictedHeld = new Map<string, T>()
  /**
   * Ids storage was read for and did not hold, oldest first, as many as the cache: a key used
   * before its first write (GETs, refused POSTs, a client polling) asked storage at every request.
   * Only this server creates documents in its storage (other processes only delete them), so an
   * absence holds until a change of its own to the id (`touch`), a removal included.
   */
  const absent = new Set<string>()
  const keyOf = (id: string) => `${options.prefix}:${id}`
  const files = guardStorage(storage)
  /**
   * Reads of storage in flight, by id: concurrent reads share one, and a change made meanwhile marks
   * it stale. A read that began before a write and ended after it holds the older version, and
   * caching that one would have the next request build on it and drop the write.
   */
  const reads = new Map<string, { promise: Promise<T | null>; stale: boolean }>()
  const touch = (id: string) => {
    absent.delete(id)
    const read = reads.get(id)
    if (read) read.stale = true
  }

  function rememberAbsent(id: string): void {
    absent.delete(id)
    absent.add(id)
    if (absent.size > cacheSize) absent.delete(absent.values().next().value!)
  }

  function remember(id: string, doc: T): void {
    evictedHeld.delete(id)
    cache.delete(id)
    cache.set(id, doc)
    if (cache.size <= cacheSize) return
    const [oldest, old] = cache.entries().next().value!
    cache.delete(oldest)
    if (holders.has(oldest)) evictedHeld.set(oldest, old)
  }

  function forget(id: string): void {
    touch(id)
    cache.delete(id)
    staged.delete(id)
    evictedHeld.delete(id)
  }

  function peek(id: string): T | undefined {
    const current = staged.get(id)
    if (current) return current
    const cached = cache.get(id) ?? evictedHeld.get(id)
    if (cached) remember(id, cached)
    return cached
  }

  function hold(id: string): () => void {
    holders.set(id, (holders.get(id) ?? 0) + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = holders.get(id)! - 1
      if (left > 0) return void holders.set(id, left)
      holders.delete(id)
      evictedHeld.delete(id)
    }
  }

  async function readStored(id: string): Promise<T | null> {
    // The raw text, parsed here: unstorage's getItem (destr) scans the whole text twice for
    // prototype-polluting keys first, a third of the cost of reading a document we wrote.
    const value: unknown = await files.getItemRaw(keyOf(id))
    if (value === null || value === undefined) return null
    const doc = parseDocument(value)
    const check = doc === undefined ? { problem: 'is not valid JSON', damaged: true } : options.checkDocument?.(doc)
    if (check) throw createUnusableDocumentError(keyOf(id), check.problem, check.damaged, options.recovery)
    return options.prepare ? options.prepare(doc as T) : (doc as T)
  }

  return {
    peek,
    replace(id, doc) {
      if (staged.has(id)) staged.set(id, doc)
      else if (cache.has(id)) cache.set(id, doc)
      else if (evictedHeld.has(id)) evictedHeld.set(id, doc)
    },
    hold,
    async read(id) {
      const held = peek(id)
      if (held) return held
      if (absent.has(id)) {
        rememberAbsent(id)
        return null
      }
      const pending = reads.get(id)
      if (pending) return pending.promise
      const read = { promise: readStored(id), stale: false }
      reads.set(id, read)
      try {
        const doc = await read.promise
        // Stale: returned to this caller, who asked before the change, but not kept.
        if (!read.stale) {
          if (doc === null) rememberAbsent(id)
          else remember(id, doc)
        }
        return doc
      } finally {
        reads.delete(id)
      }
    },
    async write(id, doc) {
      touch(id)
      try {
        // Text is stored as it is and parsed back on read, like the object unstorage would stringify.
        await files.setItem(keyOf(id), options.stringify ? options.stringify(doc) : doc)
      } catch (error) {
        forget(id)
        throw error
      }
      staged.delete(id)
      remember(id, doc)
    },
    stage(id, doc) {
      touch(id)
      cache.delete(id)
      evictedHeld.delete(id)
      staged.set(id, doc)
    },
    isStaged: (id) => staged.has(id),
    listStaged: () => [...staged.keys()],
    isStored: (id) => files.hasItem(keyOf(id)),
    forget,
    async readUncached(id) {
      return staged.get(id) ?? cache.get(id) ?? evictedHeld.get(id) ?? readStored(id)
    },
    async remove(id) {
      forget(id)
      await files.removeItem(keyOf(id))
    },
    async listIds() {
      return (await files.getKeys(options.prefix)).map((key) => key.slice(options.prefix.length + 1))
    },
  }
}
