import * as fsp from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { resolveStoragePath, writeFileAtomically } from './atomic-fs-driver.js'
import { decodeRecords } from './journal-format.js'

const JOURNAL_PREFIX = 'journal-'
const JOURNAL_SUFFIX = '.log'

/** The file name of a process's `sequence`-th journal. */
export function journalName(pid: number, sequence: number): string {
  return `${JOURNAL_PREFIX}${pid}-${String(sequence).padStart(6, '0')}${JOURNAL_SUFFIX}`
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** fsyncs a directory, so that the entries created or renamed in it are durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Replays the journals a crashed (or killed) server left in `base` into their files, then deletes
 * them. Journals of processes still running are theirs and are left alone.
 */
export async function recoverJournals(base: string): Promise<number> {
  const names = (await fsp.readdir(base)).filter((name) => name.startsWith(JOURNAL_PREFIX) && name.endsWith(JOURNAL_SUFFIX)).sort()
  const orphaned = names.filter((name) => !isAlive(Number(name.slice(JOURNAL_PREFIX.length).split('-')[0])))
  const latest = new Map<string, string | null>()
  for (const name of orphaned) {
    const { records } = decodeRecords(await fsp.readFile(join(base, name)))
    for (const record of records) latest.set(record.key, record.value)
  }
  const dirs = new Set<string>([base])
  for (const [key, value] of latest) {
    const path = resolveStoragePath(base, key)
    dirs.add(dirname(path))
    if (value === null) await fsp.unlink(path).catch(() => {})
    else await writeFileAtomically(path, value)
  }
  for (const dir of dirs) await fsyncDirectory(dir).catch(() => {})
  for (const name of orphaned) await fsp.unlink(join(base, name))
  return latest.size
}
