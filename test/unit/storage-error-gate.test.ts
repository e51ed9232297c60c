import { describe, expect, it } from 'vitest'
import { adviseOnStorageError, createStorageErrorGate, STORAGE_ERROR_QUIET_MS } from '../../src/cli/storage-error-gate.js'

describe('storage error lines of serve', () => {
  it('prints the first storage error, counts the next ones, and prints one line with their count once the quiet time is over', () => {
    let time = 0
    const gate = createStorageErrorGate(() => time)
    expect(gate('a')).toEqual({ message: 'a', more: 0 })
    for (let i = 0; i < 1000; i++) expect(gate('b')).toBeUndefined()
    time += STORAGE_ERROR_QUIET_MS
    expect(gate('c')).toEqual({ message: 'c', more: 1000 })
    expect(gate('d')).toBeUndefined()
    // The count starts again from the last line.
    time += STORAGE_ERROR_QUIET_MS
    expect(gate('e')).toEqual({ message: 'e', more: 1 })
  })

  it('says what to do about a full disk, a read-only file system and too many open files', () => {
    expect(adviseOnStorageError('storage failed to write session:k:default: ENOSPC: no space left on device, write')).toMatch(/^the disk of the data dir is full: free space on it; requests answer 500 SANDBOX_API_KEY_DATABASE_REQUIRED until then/)
    expect(adviseOnStorageError("EROFS: read-only file system, open '/d/journal-1-000002.log'")).toMatch(/read-only: make it writable again/)
    expect(adviseOnStorageError('EDQUOT: disk quota exceeded, write')).toMatch(/^the disk of the data dir is full: free space on it;/)
    expect(adviseOnStorageError('EMFILE: too many open files, open')).toMatch(/ulimit -n/)
    expect(adviseOnStorageError('ENFILE: file table overflow, open')).toMatch(/^too many open files: raise the limit \(ulimit -n\)/)
    expect(adviseOnStorageError('storage failed to read x: boom')).toBe('')
  })
})
