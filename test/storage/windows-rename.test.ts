import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import { describe, expect, it, vi } from 'vitest'
import { atomicFsDriver } from '../../src/storage/atomic-fs-driver.js'
import { createKeyRecord, readKeysFile } from '../../src/keys/keys-file.js'
import { writeKeysFile } from '../../src/keys/write-keys-file.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/**
 * Renames left to fail as on Windows while a scanner (antivirus, the search indexer) holds the
 * new temp file or the target, whichever way the code reaches rename (node:fs/promises, or node:fs's promises).
 */
const held = vi.hoisted(() => ({
  renames: 0,
  wrap(rename: (from: string, to: string) => Promise<void>) {
    return async (from: string, to: string) => {
      if (held.renames-- > 0) {
        throw Object.assign(new Error(`EPERM: operation not permitted, rename '${from}' -> '${to}'`), { errno: -4048, code: 'EPERM', syscall: 'rename', path: from, dest: to })
      }
      return rename(from, to)
    }
  },
}))

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>()
  return { ...real, rename: held.wrap(real.rename) }
})
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>()
  return { ...real, promises: { ...real.promises, rename: held.wrap(real.promises.rename) } }
})

const tempDir = useTempDirs('sandbox-windows-rename')

/** Runs WORK as on Windows (process.platform), with the next TIMES renames held. */
async function onWindowsWithHeldRenames<T>(times: number, work: () => Promise<T>): Promise<T> {
  const platform = Object.getOwnPropertyDescriptor(process, 'platform')!
  Object.defineProperty(process, 'platform', { ...platform, value: 'win32' })
  held.renames = times
  try {
    return await work()
  } finally {
    Object.defineProperty(process, 'platform', platform)
    held.renames = 0
  }
}

describe('files replaced on Windows while another process holds them for a moment (emulated)', () => {
  it('sandbox keys writes the keys file, where the rename over it failed with EPERM', async () => {
    const file = join(await tempDir(), 'keys.json')
    await writeKeysFile(file, { version: 1, keys: [] })
    const record = createKeyRecord({ now: new Date() })
    await onWindowsWithHeldRenames(2, () => writeKeysFile(file, { version: 1, keys: [record] }))
    expect((await readKeysFile(file)).keys.map((key) => key.key)).toEqual([record.key])
    expect(await readdir(join(file, '..'))).toEqual(['keys.json'])
  })

  it('a file of fs storage written whole (temp file, rename) is written, where the rename over it failed with EPERM', async () => {
    const dir = await tempDir()
    const storage = createStorage({ driver: atomicFsDriver({ base: dir }) })
    await storage.setItem('session:k1:default', 'old')
    await onWindowsWithHeldRenames(2, () => storage.setItem('session:k1:default', 'new'))
    expect(await readFile(join(dir, 'session', 'k1~default'), 'utf8')).toBe('new')
    expect(await readdir(join(dir, 'session'))).toEqual(['k1~default'])
  })
})
