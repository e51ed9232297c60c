import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { encodeRecords } from '../../src/storage/journal-format.js'
import { writeFully } from '../../src/storage/journal-files.js'

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'journal-replay-order-'))
  dirs.push(dir)
  return dir
}

describe('replaying a gone server\'s journals', () => {
  it('takes the later of one server\'s journals when both have the same modification time (coarse clocks)', async () => {
    const dir = await tempDir()
    const first = join(dir, 'journal-900-000001.log')
    const second = join(dir, 'journal-900-000002.log')
    await writeFile(second, encodeRecords([{ key: 'session:x:default', value: '{"v":"second"}' }], true))
    await writeFile(first, encodeRecords([{ key: 'session:x:default', value: '{"v":"first"}' }], true))
    const at = new Date(Date.now() - 60_000)
    for (const path of [first, second]) await utimes(path, at, at)
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    try {
      expect(await storage.getItem('session:x:default')).toEqual({ v: 'second' })
    } finally {
      await storage.dispose()
    }
  })

  it('leaves files that only start like a journal alone', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'journal-notes.txt'), 'not a journal\n')
    const storage = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    await storage.dispose()
    expect(await readdir(dir)).toContain('journal-notes.txt')
  })
})

describe('writeFully', () => {
  it('fails with ENOSPC when a write takes no bytes, instead of trying forever', async () => {
    const handle = { write: async () => ({ bytesWritten: 0, buffer: Buffer.alloc(0) }) }
    await expect(writeFully(handle as never, Buffer.from('x'))).rejects.toMatchObject({ code: 'ENOSPC' })
  })
})
