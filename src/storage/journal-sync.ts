import type { FileHandle } from 'node:fs/promises'
import { createJournalFile, fsyncDirectory } from './journal-files.js'
import { syncFileData } from '../files/sync-file.js'

/** The journal being appended to. */
export interface Journal {
  handle: FileHandle
  name: string
  /** Whether its directory entry has been made durable. */
  listed: boolean
  /** Whether it holds writes not yet fdatasynced. */
  unsynced: boolean
  /** Whether nothing was written to it yet: its first write starts with the format line. */
  fresh: boolean
  /** Bytes of whole, acknowledged appends: where a refused append is cut back to. */
  size: number
  /** The fdatasync running now, if any. */
  syncing?: Promise<void>
}

/** Opens this process's next journal in `base`, with nothing written or synced yet. */
export async function openJournal(base: string, nextSequence: () => number): Promise<Journal> {
  const { handle, name } = await createJournalFile(base, nextSequence)
  return { handle, name, listed: false, unsynced: false, fresh: true, size: 0 }
}

/** Makes a journal durable: its directory entry once, then what was written to it so far. */
export async function syncJournal(base: string, target: Journal): Promise<void> {
  // A sync already running may have started before the writes this caller needs on disk.
  while (target.syncing) await target.syncing.catch(() => {})
  if (!target.listed) {
    await fsyncDirectory(base)
    target.listed = true
  }
  if (!target.unsynced) return
  // Cleared first: a write that lands while this sync runs marks it again for the next one.
  target.unsynced = false
  const syncing = syncFileData(target.handle)
  target.syncing = syncing
  try {
    await syncing
  } catch (error) {
    target.unsynced = true
    throw error
  } finally {
    if (target.syncing === syncing) target.syncing = undefined
  }
}

/**
 * Cuts a journal back to its acknowledged appends after an append failed, so that it can take the
 * next ones: sealing it instead, and opening another, left one more file per refused append on a
 * full disk (168 in 8 s), each an inode on the disk that was full. The cut is synced before
 * anything is appended after it, so that a power cut cannot leave the torn bytes in front of
 * later records, where they would read as damage. Rejects if the journal cannot be cut back:
 * then it must be sealed, as before.
 */
export async function rewindJournal(base: string, target: Journal): Promise<void> {
  const { size } = await target.handle.stat()
  // The append took nothing (a write refused whole): the file is as it was.
  if (size === target.size) return
  await target.handle.truncate(target.size)
  target.unsynced = true
  await syncJournal(base, target)
}
