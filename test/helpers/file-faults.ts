import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { expect, vi } from 'vitest'

/** The methods of fs/promises file handles that the storage tests make fail. */
type FileHandleMethods = Record<'write' | 'truncate' | 'writeFile' | 'datasync', (...args: unknown[]) => Promise<unknown>>

/** The prototype every fs/promises file handle shares, found through a probe file in DIR. */
export async function findFileHandlePrototype(dir: string): Promise<FileHandleMethods> {
  const probe = await open(join(dir, 'probe'), 'w')
  await probe.close()
  return Object.getPrototypeOf(probe) as FileHandleMethods
}

/** The error a full disk gives a write. */
export const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })

/**
 * A disk that has just filled up: the next file-handle write takes half its bytes (and says so),
 * every later one fails with ENOSPC, and with `truncateFails` a truncate fails with EIO (a torn
 * append that cannot be cut back). Returns how many writes were tried, and `restore`.
 */
async function fillDiskMidWrite(dir: string, { truncateFails = false } = {}): Promise<{ calls: () => number; restore: () => void }> {
  const proto = await findFileHandlePrototype(dir)
  const realWrite = proto.write
  let calls = 0
  const writeSpy = vi.spyOn(proto, 'write').mockImplementation(async function (this: unknown, ...args: unknown[]) {
    if (++calls === 1) return realWrite.call(this, (args[0] as Uint8Array).subarray(0, Math.floor((args[0] as Uint8Array).length / 2)))
    throw enospc()
  })
  const truncateSpy = truncateFails ? vi.spyOn(proto, 'truncate').mockRejectedValue(Object.assign(new Error('EIO: i/o error, ftruncate'), { code: 'EIO' })) : undefined
  return {
    calls: () => calls,
    restore: () => {
      writeSpy.mockRestore()
      truncateSpy?.mockRestore()
    },
  }
}

/**
 * Runs WRITE on a disk that fills up under it (fillDiskMidWrite) and expects it refused with
 * ENOSPC; the disk is whole again after. Returns how many file writes it tried.
 */
export async function refuseOnFillingDisk(dir: string, write: () => Promise<unknown>, options: { truncateFails?: boolean } = {}): Promise<number> {
  const disk = await fillDiskMidWrite(dir, options)
  try {
    await expect(write()).rejects.toThrow(/ENOSPC/)
  } finally {
    disk.restore()
  }
  return disk.calls()
}
