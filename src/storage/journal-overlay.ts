import * as fsp from 'node:fs/promises'
import { join } from 'node:path'
import type { Driver } from 'unstorage'
import { listJournalNames, sortOldestFirst } from './journal-files.js'
import { decodeRecords } from './journal-format.js'

/** The latest value of each key in the journals of a data dir, and the journals it came from. */
export interface JournalOverlay {
  names: string[]
  latest: Map<string, string | null>
}

/**
 * Reads the journals a killed server left, for a tool that only reads (`sandbox logs`): their
 * changes are in no file until the next start replays them, and after a kill -9 under load that
 * was most of the last requests (105 of 1,028 shown, measured). Read as far as they can be: a
 * journal this user may not read (another user's server, mode 0600), of a newer format, or
 * damaged past some point adds nothing, or only what comes before the damage.
 */
export async function readJournalOverlay(base: string): Promise<JournalOverlay | undefined> {
  const found = await listJournalNames(base).catch(() => [])
  if (found.length === 0) return undefined
  const names = await sortOldestFirst(base, found).catch(() => found)
  const latest = new Map<string, string | null>()
  for (const name of names) {
    const bytes = await fsp.readFile(join(base, name)).catch(() => undefined)
    if (!bytes) continue
    for (const record of decodeRecords(bytes).records) latest.set(record.key, record.value)
  }
  return latest.size > 0 ? { names, latest } : undefined
}

/**
 * `files` (the data dir's files) with the overlay's values over them, until a server starts and
 * replays the journals (they are gone then, and the files hold the same values or newer ones).
 * Read-only: a tool that writes opens the data dir as its owner instead (create-storage.ts).
 */
export function overlayJournals(files: Driver, base: string, overlay: JournalOverlay): Driver {
  let current: Map<string, string | null> | undefined = overlay.latest
  async function layer(): Promise<Map<string, string | null> | undefined> {
    if (current && !(await fsp.access(join(base, overlay.names.at(-1)!)).then(() => true, () => false))) current = undefined
    return current
  }
  const refuse = () => Promise.reject(new Error('this storage is read-only'))
  return {
    ...files,
    name: 'journal-overlay',
    async hasItem(key, opts) {
      const latest = await layer()
      return latest?.has(key) ? latest.get(key) !== null : files.hasItem(key, opts)
    },
    async getItem(key, opts) {
      const latest = await layer()
      return latest?.has(key) ? latest.get(key) ?? null : files.getItem(key, opts)
    },
    async getItems(items, opts) {
      const latest = await layer()
      const fromFiles = await (files.getItems ? files.getItems(items, opts) : Promise.all(items.map(async ({ key }) => ({ key, value: await files.getItem(key, {}) }))))
      return latest ? fromFiles.map(({ key, value }) => ({ key, value: latest.has(key) ? latest.get(key) ?? null : value })) : fromFiles
    },
    async getKeys(prefix, opts) {
      const latest = await layer()
      const keys = new Set(await files.getKeys(prefix, opts))
      for (const [key, value] of latest ?? []) {
        if (value === null) keys.delete(key)
        else keys.add(key)
      }
      return [...keys]
    },
    setItem: refuse,
    removeItem: refuse,
  }
}
