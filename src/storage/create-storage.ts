import { promises as fsp } from 'node:fs'
import { join, resolve } from 'node:path'
import { createStorage, type Storage } from 'unstorage'
import { createCompactMemoryDriver } from './memory-driver.js'
import { atomicFsDriver, tidyDataDir } from './atomic-fs-driver.js'
import { journaledFsDriver } from './journaled-fs-driver.js'
import { recoverJournals } from './journal-files.js'
import { checkRedisUrl } from './redis-url.js'
import { StorageError } from './storage-error.js'

/** The storage backends this version offers. */
export type StorageKind = 'fs' | 'memory' | 'redis'

/** Options of createSandboxStorage. */
export interface StorageOptions {
  kind: StorageKind
  /** fs only: the directory that holds the state. */
  dataDir?: string
  /**
   * fs only: true for the server, which owns the data dir: writes go through a group-commit
   * journal, and journals left by a crash are replayed first. Tools that only read or delete
   * (`sandbox logs`, `sandbox keys reset`) leave it off and write files directly.
   */
  journal?: boolean
  /** redis only: the server's `redis://` or `rediss://` URL, with a database number as its path. */
  url?: string
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
  throw new StorageError(`unknown storage "${text}": use fs, memory or a redis:// URL`)
}

async function prepareDataDir(dataDir: string): Promise<string> {
  const dir = resolve(dataDir)
  try {
    await fsp.mkdir(dir, { recursive: true })
    const probe = join(dir, `.probe-${process.pid}`)
    await fsp.writeFile(probe, 'ok')
    await fsp.unlink(probe)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new StorageError(`data dir ${dir} is not a writable directory (${code ?? (error as Error).message}); pick another with --data-dir`, { cause: error })
  }
  try {
    await tidyDataDir(dir)
  } catch (error) {
    throw new StorageError(`could not tidy ${dir} (stale temp files, files of an earlier layout): ${(error as Error).message}`, { cause: error })
  }
  return dir
}

/** Creates the unstorage instance the sandbox keeps its state in. */
export async function createSandboxStorage(options: StorageOptions): Promise<Storage> {
  if (options.kind === 'memory') return createStorage({ driver: createCompactMemoryDriver() })
  if (options.kind === 'redis') {
    if (!options.url) throw new StorageError('redis storage needs a URL (e.g. redis://127.0.0.1:6379/0)')
    // Loaded only here: the redis client is not needed, nor paid for at start, on fs or memory.
    const { createRedisStorage } = await import('./redis-storage.js')
    return createRedisStorage(options.url, { onStatus: options.onStatus })
  }
  const base = await prepareDataDir(options.dataDir ?? '.sandbox')
  if (!options.journal) return createStorage({ driver: atomicFsDriver({ base }) })
  try {
    await recoverJournals(base)
  } catch (error) {
    throw new StorageError(`cannot replay the journal in ${base}: ${(error as Error).message}`, { cause: error })
  }
  return createStorage({ driver: journaledFsDriver({ base }) })
}
