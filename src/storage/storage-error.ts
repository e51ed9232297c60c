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

/** Wraps any backend failure in StorageError, keeping StorageErrors as they are. */
export function toStorageError(error: unknown, action: string): StorageError {
  if (error instanceof StorageError) return error
  const reason = error instanceof Error ? error.message : String(error)
  return new StorageError(`storage failed to ${action}: ${reason}`, { cause: error })
}
