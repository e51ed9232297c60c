import { readdir, statfs, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { journaledFsDriver } from '../../src/storage/index.js'
import { recoverJournals } from '../../src/storage/journal-files.js'
import { TMPFS_UNAVAILABLE, useSmallTmpfs } from '../helpers/small-tmpfs.js'

/**
 * fs storage on a disk that really fills up (a small tmpfs), where the injected ENOSPC of
 * drivers.test.ts cannot show what a full disk leaves behind: partly written files.
 */
const tmpfs = useSmallTmpfs('sandbox-full-disk')

/** Fills the disk but for `leave` bytes with a file to delete later. */
async function fillDisk(dir: string, leave: number): Promise<string> {
  const { bavail, bsize } = await statfs(dir)
  const filler = join(dir, 'filler')
  await writeFile(filler, Buffer.alloc(Math.max(0, Number(bavail) * Number(bsize) - leave)))
  return filler
}

async function listAll(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String)
}

describe.skipIf(TMPFS_UNAVAILABLE !== '')(`on a full disk${TMPFS_UNAVAILABLE ? ` (skipped: ${TMPFS_UNAVAILABLE})` : ''}`, () => {
  it('refuses writes the journal cannot hold, leaves no temp files, and takes writes again once space is freed', async () => {
    const base = join(await tmpfs('1m'), 'data')
    await import('node:fs/promises').then((fs) => fs.mkdir(base))
    await recoverJournals(base)
    const storage = createStorage({ driver: journaledFsDriver({ base, checkpointDelayMs: 5 }) })
    const filler = await fillDisk(base, 96 * 1024)
    const doc = 'x'.repeat(20 * 1024)
    const acknowledged = new Map<string, string>()
    let refused = 0
    for (let i = 0; i < 12; i++) {
      const key = `session:k${i}:default`
      await storage.setItem(key, `${i}${doc}`).then(() => acknowledged.set(key, `${i}${doc}`), () => refused++)
    }
    expect(acknowledged.size).toBeGreaterThan(0)
    expect(refused).toBeGreaterThan(0)
    // Checkpoints of what the journal holds find no room and are retried.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await listAll(base)).filter((name) => name.endsWith('.tmp'))).toEqual([])

    await unlink(filler)
    await storage.setItem('session:after:default', 'after')
    acknowledged.set('session:after:default', 'after')
    await storage.dispose()
    const names = await listAll(base)
    expect(names.filter((name) => name.endsWith('.tmp') || name.startsWith('journal-'))).toEqual([])
    const reopened = createStorage({ driver: journaledFsDriver({ base }) })
    for (const [key, value] of acknowledged) expect(await reopened.getItem(key)).toBe(value)
    await reopened.dispose()
  })
})
