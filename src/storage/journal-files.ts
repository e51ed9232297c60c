import * as fsp from 'node:fs/promises'
import { join } from 'node:path'
import { resolveStoragePath } from './atomic-fs-driver.js'
import { createCheckpointWriter } from './checkpoint-writer.js'
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
 * them: one checkpoint of their latest values. Journals of processes still running are theirs
 * and are left alone.
 */
export async function recoverJournals(base: string): Promise<number> {
  const names = (await fsp.readdir(base)).filter((name) => name.startsWith(JOURNAL_PREFIX) && name.endsWith(JOURNAL_SUFFIX)).sort()
  const orphaned = names.filter((name) => !isAlive(Number(name.slice(JOURNAL_PREFIX.length).split('-')[0])))
  if (orphaned.length === 0) return 0
  const latest = new Map<string, string | null>()
  for (const name of orphaned) {
    const { records } = decodeRecords(await fsp.readFile(join(base, name)))
    for (const record of records) latest.set(record.key, record.value)
  }
  const writer = createCheckpointWriter()
  try {
    await writer.write([...latest].map(([key, value]) => [resolveStoragePath(base, key), value]), orphaned.map((name) => join(base, name)))
  } finally {
    await writer.close()
  }
  return latest.size
}
