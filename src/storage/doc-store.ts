import type { Storage } from 'unstorage'
import { StorageError, toStorageError } from './storage-error.js'

/** JSON documents by id under one prefix, with a write-through LRU cache. */
export interface DocStore<T> {
  read(id: string): Promise<T | null>
  write(id: string, doc: T): Promise<void>
  remove(id: string): Promise<void>
  listIds(): Promise<string[]>
}

/**
 * Creates a document store. Documents are treated as immutable values: callers build a new
 * object to change one and must not mutate what `read` returns, which lets cached reads skip
 * cloning on the hot path.
 */
export function createDocStore<T extends object>(storage: Storage, options: { prefix: string; cacheSize?: number }): DocStore<T> {
  const cacheSize = options.cacheSize ?? 1000
  const cache = new Map<string, T>()
  const keyOf = (id: string) => `${options.prefix}:${id}`

  function remember(id: string, doc: T): void {
    cache.delete(id)
    cache.set(id, doc)
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value!)
  }

  return {
    async read(id) {
      const cached = cache.get(id)
      if (cached) {
        remember(id, cached)
        return cached
      }
      let value: unknown
      try {
        value = await storage.getItem(keyOf(id))
      } catch (error) {
        throw toStorageError(error, `read ${keyOf(id)}`)
      }
      if (value === null || value === undefined) return null
      if (typeof value !== 'object') throw new StorageError(`stored document ${keyOf(id)} is not valid JSON`)
      remember(id, value as T)
      return value as T
    },
    async write(id, doc) {
      try {
        await storage.setItem(keyOf(id), doc as never)
      } catch (error) {
        cache.delete(id)
        throw toStorageError(error, `write ${keyOf(id)}`)
      }
      remember(id, doc)
    },
    async remove(id) {
      cache.delete(id)
      try {
        await storage.removeItem(keyOf(id))
      } catch (error) {
        throw toStorageError(error, `remove ${keyOf(id)}`)
      }
    },
    async listIds() {
      try {
        const keys = await storage.getKeys(options.prefix)
        return keys.map((key) => key.slice(options.prefix.length + 1))
      } catch (error) {
        throw toStorageError(error, `list ${options.prefix}`)
      }
    },
  }
}
