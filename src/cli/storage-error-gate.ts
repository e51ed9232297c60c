/** How long after a storage error serve prints no other, counting them instead. */
export const STORAGE_ERROR_QUIET_MS = 30_000

/** What serve prints of one storage error: the line, or nothing while the errors are being counted. */
export interface StorageErrorLine {
  message: string
  /** Errors not printed since the last line. */
  more: number
}

/**
 * What an operator can do about a storage failure, from the system's error code in its message:
 * a full disk, a read-only file system and too many open files are each fixed outside the
 * sandbox, and the server takes writes again by itself once they are.
 */
export function adviseOnStorageError(message: string): string {
  const code = /\b(ENOSPC|EDQUOT|EROFS|EMFILE|ENFILE)\b/.exec(message)?.[1]
  const until = 'requests answer 500 SANDBOX_API_KEY_DATABASE_REQUIRED until then, and serve takes writes again without a restart'
  if (code === 'ENOSPC' || code === 'EDQUOT') return `the disk of the data dir is full: free space on it; ${until}`
  if (code === 'EROFS') return `the data dir's file system is read-only: make it writable again; ${until}`
  if (code === 'EMFILE' || code === 'ENFILE') return `too many open files: raise the limit (ulimit -n) or lower the load; ${until}`
  return ''
}

/**
 * Lets one storage error line through per STORAGE_ERROR_QUIET_MS and counts the rest: while a disk
 * is full every request fails, and a line each (1,638 in 8 s measured on a full tmpfs) buried the
 * one that says what to do.
 */
export function createStorageErrorGate(now: () => number = Date.now): (message: string) => StorageErrorLine | undefined {
  let shownAt: number | undefined
  let hidden = 0
  return (message) => {
    const time = now()
    if (shownAt !== undefined && time - shownAt < STORAGE_ERROR_QUIET_MS) {
      hidden++
      return undefined
    }
    const line = { message, more: hidden }
    shownAt = time
    hidden = 0
    return line
  }
}
