import * as fsp from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { resolveStoragePath } from './atomic-fs-driver.js'
import { PRIVATE_FILE_MODE } from './file-modes.js'
import { createCheckpointWriter } from './checkpoint-writer.js'
import { decodeRecords } from './journal-format.js'
import { describeThisVersion } from '../files/describe-this-version.js'
import { DataDirGoneError, StorageError } from './storage-error.js'
import { syncFile } from '../files/sync-file.js'

const JOURNAL_PREFIX = 'journal-'
const JOURNAL_SUFFIX = '.log'
const JOURNAL_NAME = /^journal-\d+-\d{6,}\.log$/

/** The file name of a process's `sequence`-th journal. */
export function journalName(pid: number, sequence: number): string {
  return `${JOURNAL_PREFIX}${pid}-${String(sequence).padStart(6, '0')}${JOURNAL_SUFFIX}`
}

/**
 * Creates this process's next journal in `base`. A name already taken (a journal this process's pid
 * left in a dir it did not recover) is skipped rather than appended to: a journal's format line
 * must be its first line, and the records of that other journal were never this driver's to
 * checkpoint and delete.
 */
export async function createJournalFile(base: string, nextSequence: () => number): Promise<{ handle: FileHandle; name: string }> {
  for (;;) {
    const name = journalName(process.pid, nextSequence())
    try {
      // Owner only: it holds every document, webhook signing secrets included (file-modes.ts).
      return { handle: await fsp.open(join(base, name), 'ax', PRIVATE_FILE_MODE), name }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' && !(await isDirPresent(base))) throw createDataDirGoneError(base, error)
      if (code !== 'EEXIST') throw error
    }
  }
}

/**
 * The data dir deleted under a running server (`rm -rf .sandbox` to start afresh): every write
 * failed with an ENOENT naming a journal file, which said neither what happened nor what to do.
 * Not recreated here: the server still holds documents of the deleted state, and its lock is gone.
 */
function createDataDirGoneError(base: string, cause: unknown): StorageError {
  return new DataDirGoneError(`${describeDataDirGone(base)}: stop serve and start it again, which starts from an empty data dir; until then writes are refused`, { cause })
}

/** "data dir DIR no longer exists (...)": the start of the messages about a data dir deleted under its server. */
export function describeDataDirGone(base: string): string {
  return `data dir ${base} no longer exists (deleted or moved while serve ran)`
}

/** Whether a directory (the data dir) is there. */
export function isDirPresent(dir: string): Promise<boolean> {
  return fsp.stat(dir).then(() => true, () => false)
}

/**
 * A write can take fewer bytes than it was given without failing (a disk filling up): the rest
 * is written until all of it is, and a write that takes none is a full disk. Only then is the
 * batch acknowledged.
 */
export async function writeFully(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let offset = 0; offset < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset)
    if (bytesWritten === 0) throw Object.assign(new Error('ENOSPC: no space left on device, the journal took no more bytes'), { code: 'ENOSPC' })
    offset += bytesWritten
  }
}

/**
 * Whether a directory can be fsynced here. Not on Windows: Node opens a directory there, but its
 * fsync (FlushFileBuffers) needs a handle open for writing, which a directory never is, and fails
 * with EPERM: serve's journal was never synced, no checkpoint got past it, and the next start
 * failed to replay the journal. Windows has no sync of one directory (only of a whole volume, for
 * administrators); NTFS journals its metadata, so a crash leaves the entries whole, old or new.
 */
export function canSyncDirectories(platform: NodeJS.Platform = process.platform): boolean {
  return platform !== 'win32'
}

/** What fsyncDirectory may be given instead of the real system (tests emulate Windows with it). */
export interface SyncDirectoryOptions {
  platform?: NodeJS.Platform
  open?: (path: string, flags: string) => Promise<Pick<FileHandle, 'sync' | 'close'>>
}

/**
 * fsyncs a directory, so that the entries created or renamed in it are durable; nothing where
 * that cannot be done (canSyncDirectories).
 */
export async function fsyncDirectory(dir: string, options: SyncDirectoryOptions = {}): Promise<void> {
  if (!canSyncDirectories(options.platform)) return
  const handle = await (options.open ?? openForSync)(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Opens a file or directory whose sync() goes through its descriptor (see syncFile). */
async function openForSync(path: string, flags: string): Promise<Pick<FileHandle, 'sync' | 'close'>> {
  const handle = await fsp.open(path, flags)
  return { sync: () => syncFile(handle), close: () => handle.close() }
}

/** The journals in `base`, by the names journalName gives. */
export async function listJournalNames(base: string): Promise<string[]> {
  // Those names only: a `journal-notes.log` of a directory given as the data dir by mistake is
  // no journal, to be replayed as "damaged" or deleted when empty.
  return (await fsp.readdir(base)).filter((name) => JOURNAL_NAME.test(name))
}

/**
 * Journals oldest first, so that later values win: by time across servers (a recovery cut short
 * can leave two servers' journals), then by name, which orders one server's journals by sequence.
 */
export async function sortOldestFirst(base: string, names: string[]): Promise<string[]> {
  const times = new Map(await Promise.all(names.map(async (name) => [name, (await fsp.stat(join(base, name))).mtimeMs] as const)))
  return [...names].sort((a, b) => times.get(a)! - times.get(b)! || (a < b ? -1 : 1))
}

/**
 * Replays the journals a crashed (or killed) server left in `base` into their files, then deletes
 * them: one checkpoint of their latest values. Called by the server that holds the dir's lock,
 * before it opens a journal of its own, so every journal found is a gone server's: whatever pid
 * its name holds, this process's included (a restarted container's server is often pid 1 again),
 * or one now reused by an unrelated process.
 */
export async function recoverJournals(base: string): Promise<number> {
  const names = await listJournalNames(base)
  if (names.length === 0) return 0
  const orphaned = await sortOldestFirst(base, names)
  const latest = new Map<string, string | null>()
  for (const name of orphaned) {
    const { records, damagedAt, newerFormat } = decodeRecords(await fsp.readFile(join(base, name)))
    if (newerFormat !== undefined) {
      throw new Error(`${name} is a journal in a newer sandbox's format (${JSON.stringify(newerFormat)}); this is ${describeThisVersion()}, which reads "sandbox-journal v2" and the format before it. Nothing was replayed and the journal is kept: start that newer version on this data dir again (it replays the journal), or move the journal out of ${base} to start without the changes it holds`)
    }
    // Replaying the records before the damage and deleting the journal would lose the ones after
    // it without a word: the journal is left as it is, for the user to decide.
    if (damagedAt !== undefined) {
      throw new Error(`${name} is damaged at byte ${damagedAt}, before its end, so the changes after that point cannot be read. Nothing was replayed and the journal is kept: restore it, or move it out of ${base} to start without the changes it holds`)
    }
    for (const record of records) latest.set(record.key, record.value)
  }
  // Full priority: the server waits for this replay before it listens, so there is no event loop
  // to leave the CPU to. At nice 19, on one core shared with other processes, a restart with 600
  // keys' deliveries waiting took 52-77 s to listen, against 5 s.
  const writer = createCheckpointWriter({ lowPriority: false })
  try {
    await writer.write([...latest].map(([key, value]) => [resolveStoragePath(base, key), value]), orphaned.map((name) => join(base, name)))
  } finally {
    await writer.close()
  }
  return latest.size
}
