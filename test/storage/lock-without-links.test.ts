import { readdir } from 'node:fs/promises'
import { describe, expect, it, vi } from 'vitest'
import { createSandboxStorage } from '../../src/storage/create-storage.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/**
 * A data dir on a drive without hard links, as Node on Windows answers a link there (FAT32,
 * exFAT): CreateHardLinkW fails with ERROR_INVALID_FUNCTION, which libuv reads as EISDIR.
 */
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>()
  const link = async (from: string, to: string) => {
    throw Object.assign(new Error(`EISDIR: illegal operation on a directory, link '${from}' -> '${to}'`), { errno: -4068, code: 'EISDIR', syscall: 'link', path: from, dest: to })
  }
  return { ...real, promises: { ...real.promises, link } }
})

const tempDir = useTempDirs('sandbox-no-links')

describe('a data dir on a file system without hard links (a FAT32 or exFAT drive)', () => {
  it('serve\'s storage is refused with a storage error that says why and what to do, not an unexpected one', async () => {
    const dir = await tempDir()
    const opening = createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    await expect(opening).rejects.toMatchObject({ name: 'StorageError', message: expect.stringMatching(/cannot create its lock .*server\.lock \(EISDIR\); the lock is a hard link, which FAT32 and exFAT drives .* do not have: on one of those, use a data dir on another drive \(--data-dir\)/) })
    // Nothing left behind: the lock's temp file is gone.
    expect(await readdir(dir)).toEqual([])
  })
})
