import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import { join, resolve } from 'node:path'
import { createStorage, type Storage } from 'unstorage'
import { createCompactMemoryDriver } from './memory-driver.js'
import { atomicFsDriver, flattenNestedLayout, tidyDataDir, writeFileAtomically } from './atomic-fs-driver.js'
import { journaledFsDriver } from './journaled-fs-driver.js'
import { listJournalNames, recoverJournals } from './journal-files.js'
import { isDataDirInUse, lockDataDir } from './data-dir-lock.js'
import { overlayJournals, readJournalOverlay } from './journal-overlay.js'
import { explainReplayFailure } from './checkpoint-failure.js'
import { checkRedisUrl } from './redis-url.js'
import { maskCredentials } from '../text/url-password.js'
import { suggestClosest } from '../text/closest-match.js'
import { StorageError } from './storage-error.js'
import { createDirectory } from '../files/create-directory.js'
import { checkFormatMarker, FORMAT_KEY, formatMarkerText } from './storage-format.js'

/** The storage backends this version offers. */
export type StorageKind = 'fs' | 'memory' | 'redis'

/** Options of createSandboxStorage. */
export interface StorageOptions {
  kind: StorageKind
  /** fs only: the directory that holds the state. */
  dataDir?: string
  /**
   * True for the server, which owns the storage: it locks it (fs: `server.lock` in the data dir;
   * redis: a lease key), so that a second server on it fails at start. On fs its writes go
   * through a group-commit journal, and it first tidies the dir and replays journals a crash
   * left. Tools that only read or delete (`sandbox logs`, `sandbox keys reset`) leave it off:
   * they work beside a running server, and on fs write files directly.
   */
  owner?: boolean
  /**
   * fs only: the caller only reads (`sandbox logs`), so a data dir it cannot write in (another
   * user's, a read-only mount) is fine; a tool that deletes (`keys reset`) leaves it off.
   */
  readOnly?: boolean
  /**
   * fs only, for a tool that deletes (`keys reset`): when a server was killed and left journals,
   * and none runs now, the tool opens the data dir as its owner for its own run, so that those
   * changes are replayed before its deletions rather than over them at the next start.
   */
  replayCrashed?: boolean
  /** redis only: the server's `redis://` or `rediss://` URL, with a database number as its path. */
  url?: string
  /** fs, as owner: told when a checkpoint fails while the server runs (requests are still answered from the journal). */
  onCheckpointError?: (error: StorageError) => void
  /** redis only: told when the connection is lost (`up` false) and when it is back (default: stderr). */
  onStatus?: (message: string, up: boolean) => void
}

/** Reads a `--storage` value: fs, memory, or a redis URL (checked here, so a typo fails at once). */
export function parseStorageKind(text: string): StorageKind {
  const value = text.trim().toLowerCase()
  if (value === 'fs' || value === 'memory') return value
  if (value.startsWith('redis://') || value.startsWith('rediss://')) {
    checkRedisUrl(text.trim())
    return 'redis'
  }
  // Echoed without what may be a password: `valkey://:PASSWORD@...` or `redis:/:PASSWORD@...`;
  // only a plain word (no URL) is matched against the names.
  if (value === 'redis' || value === 'rediss') throw new StorageError(`--storage ${value} needs the server's URL: ${value}://HOST:PORT/DB, e.g. ${value}://127.0.0.1:6379/0`)
  // `mem` is short for memory rather than a typo of it: no edit distance finds it.
  const short = value.length >= 3 && 'memory'.startsWith(value) ? ' (did you mean memory?)' : ''
  const suggestion = short || (/^[a-z]+$/.test(value) ? suggestClosest(value, ['fs', 'memory']) : '')
  throw new StorageError(`unknown storage "${maskCredentials(text)}"${suggestion}: use fs, memory or a redis:// URL`)
}

/**
 * Creates the data dir if need be (the server), or requires it (the tools: a mistyped --data-dir
 * would otherwise read as an empty log), and checks that files can be written in it, or for
 * `readOnly` tools only that it can be read.
 */
async function prepareDataDir(dataDir: string, create: boolean, readOnly: boolean): Promise<string> {
  const dir = resolve(dataDir)
  if (!create && !(await fsp.stat(dir).then(() => true, () => false))) {
    throw new StorageError(`no sandbox data dir at ${dir}: pass the --data-dir that sandbox serve uses (default .sandbox in the directory it was started in)`)
  }
  if (readOnly && !create) return checkReadableDir(dir)
  try {
    await createDirectory(dir)
    // Unique per call: two storages opened at once in one process must not delete each other's.
    const probe = join(dir, `.probe-${process.pid}-${randomBytes(4).toString('hex')}`)
    await fsp.writeFile(probe, 'ok')
    await fsp.unlink(probe)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const full = code === 'ENOSPC' || code === 'EDQUOT'
    // The tools read and delete, which a full disk allows; `sandbox logs` is how one sees what
    // failed there. A read-only one is still refused: `keys reset` could not delete the session.
    if (full && !create) return dir
    const advice = full ? 'its disk is full: free space on it, or use another data dir (--data-dir)' : 'use another data dir (--data-dir)'
    throw new StorageError(`data dir ${dir} is not a writable directory (${code ?? (error as Error).message}); ${advice}`, { cause: error })
  }
  return dir
}

/** DIR, when it is a directory this process can list and read files in. */
async function checkReadableDir(dir: string): Promise<string> {
  try {
    if (!(await fsp.stat(dir)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' })
    await fsp.access(dir, fsp.constants.R_OK | fsp.constants.X_OK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new StorageError(`data dir ${dir} is not a readable directory (${code ?? (error as Error).message}); use another data dir (--data-dir)`, { cause: error })
  }
  return dir
}

/**
 * Refuses a data dir a newer sandbox wrote (storage-format.ts), before anything in it is read,
 * moved or replayed. Returns whether the dir has a marker yet.
 */
async function checkDataDirFormat(base: string): Promise<boolean> {
  const text = await fsp.readFile(join(base, FORMAT_KEY)).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null
    throw new StorageError(`cannot read ${join(base, FORMAT_KEY)} (${error.code ?? error.message})`, { cause: error })
  })
  checkFormatMarker(text, `data dir ${base}`, 'data dir (--data-dir)')
  return text !== null
}

/**
 * The server's fs storage: the dir locked, then tidied (a crash's temp files, an earlier
 * layout) and its journals replayed, then written through a journal. Tidying only once the lock
 * is held: another server's temp files would be files in the middle of being written.
 */
async function openOwnedDataDir(base: string, onCheckpointError?: (error: StorageError) => void): Promise<Storage> {
  const marked = await checkDataDirFormat(base)
  const lock = await lockDataDir(base)
  try {
    await tidyDataDir(base).catch((error: Error) => {
      throw new StorageError(`could not tidy ${base} (stale temp files, files of an earlier layout): ${error.message}`, { cause: error })
    })
    await recoverJournals(base).catch((error: Error) => {
      throw new StorageError(`cannot replay the journal in ${base}: ${explainReplayFailure(error)}`, { cause: error })
    })
    // Dirs of versions before the marker are format 1: marked now, so that a newer version's
    // number, once written, is what an older one sees.
    if (!marked) await writeFileAtomically(join(base, FORMAT_KEY), formatMarkerText())
  } catch (error) {
    await lock.release()
    throw error
  }
  const driver = journaledFsDriver({ base, onCheckpointError })
  return createStorage({
    driver: {
      ...driver,
      async dispose() {
        try {
          await driver.dispose?.()
        } finally {
          await lock.release()
        }
      },
    },
  })
}

/** Creates the unstorage instance the sandbox keeps its state in. */
export async function createSandboxStorage(options: StorageOptions): Promise<Storage> {
  if (options.kind === 'memory') return createStorage({ driver: createCompactMemoryDriver() })
  if (options.kind === 'redis') {
    if (!options.url) throw new StorageError('redis storage needs a URL (e.g. redis://127.0.0.1:6379/0)')
    // Loaded only here: the redis client is not needed, nor paid for at start, on fs or memory.
    const { createRedisStorage } = await import('./redis-storage.js')
    return createRedisStorage(options.url, { onStatus: options.onStatus, owner: options.owner })
  }
  const base = await prepareDataDir(options.dataDir ?? '.sandbox', options.owner ?? false, options.readOnly ?? false)
  if (options.owner) return openOwnedDataDir(base, options.onCheckpointError)
  if (options.replayCrashed && (await listJournalNames(base)).length > 0 && !(await isDataDirInUse(base))) {
    // A server that started meanwhile holds it now, and replays the journals itself.
    const owned = await openOwnedDataDir(base).catch(async (error: unknown) => {
      if (await isDataDirInUse(base)) return undefined
      throw error
    })
    if (owned) return owned
  }
  await checkDataDirFormat(base)
  await flattenNestedLayout(base).catch((error: Error) => {
    throw new StorageError(`could not move the files of an earlier layout in ${base}: ${error.message}`, { cause: error })
  })
  const files = atomicFsDriver({ base })
  // A killed server's last changes are in its journals only, until the next start replays them.
  const overlay = options.readOnly && !(await isDataDirInUse(base)) ? await readJournalOverlay(base) : undefined
  return createStorage({ driver: overlay ? overlayJournals(files, base, overlay) : files })
}
