import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { defineDriver } from 'unstorage'
import fsLiteDriver from 'unstorage/drivers/fs-lite'

const TEMP_SUFFIX = '.tmp'
const SAFE_KEY = /^[A-Za-z0-9_:.-]+$/

/** Options of the atomic fs driver. */
export interface AtomicFsOptions {
  base: string
}

/** The file of a storage key under `base`; throws for keys that could leave it. */
export function resolveStoragePath(base: string, key: string): string {
  if (!SAFE_KEY.test(key) || key.split(':').some((part) => part === '' || part === '.' || part === '..')) {
    throw new Error(`invalid storage key ${JSON.stringify(key)}`)
  }
  return join(base, key.replaceAll(':', '/'))
}

/** Deletes temp files a crash left behind; they never hold committed data. */
export async function removeStaleTempFiles(base: string): Promise<number> {
  let removed = 0
  const entries = await fsp.readdir(base, { recursive: true, withFileTypes: true }).catch(() => [])
  for (const entry of entries) {
    if (entry.isFile() && entry.name.endsWith(TEMP_SUFFIX)) {
      await fsp.unlink(join(entry.parentPath, entry.name)).catch(() => {})
      removed++
    }
  }
  return removed
}

/**
 * Writes `data` to `target` so that readers and restarts see the old or the new content, never a
 * torn file: temp file in the same directory, fsync, rename. `knownDirs` caches created folders.
 */
export async function writeFileAtomically(target: string, data: string | Uint8Array, knownDirs?: Set<string>): Promise<void> {
  const dir = dirname(target)
  if (!knownDirs?.has(dir)) {
    await fsp.mkdir(dir, { recursive: true })
    knownDirs?.add(dir)
  }
  const temp = `${target}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`
  const handle = await fsp.open(temp, 'w')
  try {
    await handle.writeFile(data)
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await fsp.rename(temp, target)
  } catch (error) {
    await fsp.unlink(temp).catch(() => {})
    throw error
  }
}

/**
 * unstorage's fs-lite driver with crash-safe writes: each value goes to a temp file in the same
 * directory, is fsynced, then renamed over the target, so a reader (or a restart after kill -9)
 * sees either the old or the new content, never a torn file.
 */
export const atomicFsDriver = defineDriver((options: AtomicFsOptions) => {
  const base = resolve(options.base)
  const lite = fsLiteDriver({ base })
  const knownDirs = new Set<string>()
  const checkKey = (key: string) => {
    resolveStoragePath(base, key)
    return key
  }

  const writeAtomically = (key: string, data: string | Uint8Array) => writeFileAtomically(resolveStoragePath(base, key), data, knownDirs)

  return {
    ...lite,
    name: 'atomic-fs',
    options,
    hasItem: (key) => lite.hasItem(checkKey(key), {}),
    getItem: (key) => lite.getItem(checkKey(key), {}),
    getItemRaw: (key) => lite.getItemRaw!(checkKey(key), {}),
    removeItem: (key) => lite.removeItem!(checkKey(key), {}),
    setItem: (key, value) => writeAtomically(key, value),
    setItemRaw: (key, value) => writeAtomically(key, value as Uint8Array),
    async getKeys(prefix, opts) {
      const keys = (await lite.getKeys(prefix, opts)) as string[]
      return keys.filter((key) => !key.endsWith(TEMP_SUFFIX))
    },
  }
})
