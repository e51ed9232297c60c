import type { SandboxStorage } from './sandbox-storage.js'

/**
 * The storage backend failed (disk full, permissions, a vanished directory, a broken driver).
 * The server answers it with 500 SANDBOX_API_KEY_DATABASE_REQUIRED; the CLI with exit 2.
 */
export class StorageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'StorageError'
  }
}

/**
 * A stored document this version cannot use (damaged, or a newer version's): storage works, and
 * a retry finds the same document, so the answer says to see the server log instead.
 */
export class UnusableDocumentError extends StorageError {}

/** A write refused because the data dir was deleted under its server: the state it held is gone on purpose. */
export class DataDirGoneError extends StorageError {}

/** Wraps any backend failure in StorageError, keeping StorageErrors as they are. */
export function toStorageError(error: unknown, action: string): StorageError {
  if (error instanceof StorageError) return error
  const reason = error instanceof Error ? error.message : String(error)
  return new StorageError(`storage failed to ${action}: ${reason}`, { cause: error })
}

/**
 * The storage calls of the stores (documents, batch files, key listings), each failure a
 * StorageError naming what was being done, which the API answers with 500
 * SANDBOX_API_KEY_DATABASE_REQUIRED.
 */
export function guardStorage(storage: SandboxStorage) {
  const guard = async <T>(action: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call()
    } catch (error) {
      throw toStorageError(error, action)
    }
  }
  return {
    getItem: <T>(key: string) => guard(`read ${key}`, () => storage.getItem<T>(key)),
    getItemRaw: (key: string) => guard(`read ${key}`, () => storage.getItemRaw(key)),
    hasItem: (key: string) => guard(`read ${key}`, () => storage.hasItem(key)),
    setItem: (key: string, value: unknown) => guard(`write ${key}`, () => storage.setItem(key, value as never)),
    removeItem: (key: string) => guard(`remove ${key}`, () => storage.removeItem(key)),
    getKeys: (base: string) => guard(`list ${base}`, () => storage.getKeys(base)),
  }
}
