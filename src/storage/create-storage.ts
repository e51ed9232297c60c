import { promises as fsp } from 'node:fs'
import { join, resolve } from 'node:path'
import { createStorage, type Storage } from 'unstorage'
import { createCompactMemoryDriver } from './memory-driver.js'
import { atomicFsDriver, tidyDataDir } from './atomic-fs-driver.js'
import { journaledFsDriver } from './journaled-fs-driver.js'
import { recoverJournals } from './journal-files.js'
import { StorageError } from './storage-error.js'

/** The storage backends this version offers. */
export type StorageKind = 'fs' | 'memory'

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
}

/**
 * Reads a `--storage` value. `redis://` URLs are recognised so the error can say so; the redis
 * driver plugs in here (unstorage's redis driver) when it is added.
 */
export function parseStorageKind(text: string): StorageKind {
  const value = text.trim().toLowerCase()
  if (value === 'fs' || value === 'memory') return value
  if (value.startsWith('redis://') || value.startsWith('rediss://')) {
    throw new StorageError(`redis storage (${text}) is not available in this version; use fs or memory`)
  }
  throw new StorageError(`unknown storage "${text}": use fs or memory`)
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
  const base = await prepareDataDir(options.dataDir ?? '.sandbox')
  if (!options.journal) return createStorage({ driver: atomicFsDriver({ base }) })
  try {
    await recoverJournals(base)
  } catch (error) {
    throw new StorageError(`cannot replay the journal in ${base}: ${(error as Error).message}`, { cause: error })
  }
  return createStorage({ driver: journaledFsDriver({ base }) })
}
