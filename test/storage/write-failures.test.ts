import { mkdir, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import { describe, expect, it, vi } from 'vitest'
import { createSandboxStorage, journaledFsDriver } from '../../src/storage/index.js'
import { useTempDirs } from '../helpers/temp-dirs.js'
import { enospc, findFileHandlePrototype, refuseOnFillingDisk } from '../helpers/file-faults.js'

/**
 * fs storage through a storage outage (injected: a directory where a file goes, or a file
 * handle's write and truncate failing), as a user sees it: what a stop says, what the data dir
 * holds after it, and what the next start reads.
 */
const tempDir = useTempDirs('sandbox-write-failures')

const journalsIn = async (dir: string) => (await readdir(dir)).filter((name) => name.startsWith('journal-'))

describe('the fs journal through an outage', () => {
  it('stops cleanly after a write that the disk refused whole: no error, and no journal left in the data dir', async () => {
    const dir = await tempDir()
    const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 60_000 }) })
    const spy = vi.spyOn(await findFileHandlePrototype(await tempDir()), 'write').mockRejectedValue(enospc())
    try {
      await expect(storage.setItem('session:a:default', { v: 1 })).rejects.toThrow(/ENOSPC/)
    } finally {
      spy.mockRestore()
    }
    // Nothing was acknowledged: nothing is kept, and the stop has nothing to report.
    await expect(storage.dispose()).resolves.toBeUndefined()
    expect(await journalsIn(dir)).toEqual([])
  })

  it('writes a failed checkpoint again by itself once its cause is gone, with no further write to the storage', async () => {
    const dir = await tempDir()
    // A directory where the document's file goes: its checkpoints fail, as on a full disk.
    await mkdir(join(dir, 'session', 'a~default'), { recursive: true })
    const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 20 }) })
    await storage.setItem('session:a:default', { v: 1 })
    await new Promise((resolve) => setTimeout(resolve, 200))
    await rm(join(dir, 'session', 'a~default'), { recursive: true })
    // The tools read the files beside the server: they see the write once the retry lands.
    await vi.waitFor(async () => expect(await journalsIn(dir)).toEqual([]), { timeout: 3000, interval: 20 })
    const tool = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    expect(await tool.getItem('session:a:default')).toEqual({ v: 1 })
    await storage.dispose()
  })

  it('after a torn write it cannot cut back, deletes that journal with the next checkpoint, so a later start never reads its older values', async () => {
    const dir = await tempDir()
    const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 60_000 }) })
    await storage.setItem('session:a:default', { v: 1 })
    // Half of the append is taken, then the disk is full, and the torn half cannot be cut back.
    await refuseOnFillingDisk(await tempDir(), () => storage.setItem('session:b:default', { v: 2 }), { truncateFails: true })
    await storage.setItem('session:a:default', { v: 3 })
    await storage.dispose()
    expect(await journalsIn(dir)).toEqual([])
    const reopened = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect([await reopened.getItem('session:a:default'), await reopened.getItem('session:b:default')]).toEqual([{ v: 3 }, null])
    await reopened.dispose()
  })

  it('refuses a write over the backlog limit while checkpoints fail, instead of holding it for as long as the outage lasts', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, 'session', 'a~default'), { recursive: true })
    const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 60_000, maxPendingChars: 100 }) })
    await storage.setItem('session:a:default', { pad: 'x'.repeat(200) })
    await expect(storage.setItem('session:b:default', { v: 2 })).rejects.toThrow(/EISDIR/)
    // Acknowledged before the outage, the first write is still there; the refused one is not.
    expect([await storage.getItem('session:a:default'), await storage.getItem('session:b:default')]).toEqual([{ pad: 'x'.repeat(200) }, null])
    await rm(join(dir, 'session', 'a~default'), { recursive: true })
    await storage.setItem('session:b:default', { v: 2 })
    await storage.dispose()
  })
})

describe('fs storage without the journal (the tools beside a server)', () => {
  it('leaves no partly written temp file in the data dir when a write fails', async () => {
    const dir = await tempDir()
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir })
    const proto = await findFileHandlePrototype(await tempDir())
    const realWrite = proto.writeFile
    // Part of the file is written, then the disk is full.
    const spy = vi.spyOn(proto, 'writeFile').mockImplementation(async function (this: unknown, ...args: unknown[]) {
      await realWrite.call(this, String(args[0]).slice(0, 2))
      throw enospc()
    })
    try {
      await expect(storage.setItem('session:a:default', { v: 1 })).rejects.toThrow(/ENOSPC/)
    } finally {
      spy.mockRestore()
    }
    expect((await readdir(dir, { recursive: true })).map(String).filter((name) => name.endsWith('.tmp'))).toEqual([])
    expect(await storage.getItem('session:a:default')).toBeNull()
  })
})
