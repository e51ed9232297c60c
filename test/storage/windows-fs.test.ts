import * as fs from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import * as os from 'node:os'
import * as path from 'node:path'
import { join } from 'node:path'
import { MessageChannel } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { HELD_RENAME_CODES, RENAME_RETRY_DELAYS_MS, renameReplacing } from '../../src/files/rename-replacing.js'
import { runCheckpointThread, type CheckpointReply, type CheckpointRequest } from '../../src/storage/checkpoint-thread.js'
import { fsyncDirectory } from '../../src/storage/journal-files.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-windows-fs')

/**
 * The error Node gives on Windows for an fsync of a directory: libuv opens a directory there
 * (FILE_FLAG_BACKUP_SEMANTICS), but FlushFileBuffers needs a handle open for writing.
 */
function windowsDirectoryFsyncError(): NodeJS.ErrnoException {
  return Object.assign(new Error('EPERM: operation not permitted, fsync'), { errno: -4048, code: 'EPERM', syscall: 'fsync' })
}

/**
 * The error Node gives on Windows for a rename of a file another process has open without
 * sharing its deletion (an antivirus scan, the search indexer): ERROR_SHARING_VIOLATION is EBUSY,
 * ERROR_ACCESS_DENIED is EPERM.
 */
function windowsHeldFileError(code: 'EPERM' | 'EBUSY' | 'EACCES', from: string, to: string): NodeJS.ErrnoException {
  const { errno, text } = { EPERM: { errno: -4048, text: 'operation not permitted' }, EBUSY: { errno: -4082, text: 'resource busy or locked' }, EACCES: { errno: -4092, text: 'permission denied' } }[code]
  return Object.assign(new Error(`${code}: ${text}, rename '${from}' -> '${to}'`), { errno, code, syscall: 'rename', path: from, dest: to })
}

/**
 * The real fs, but with Windows' answers: to an fsync of a directory, and to the first
 * `heldRenames` renames, as while a scanner holds the new temp file or the target.
 */
function fsWithWindowsDirectorySync(heldRenames = 0): typeof fs {
  const directoryFds = new Set<number>()
  return {
    ...fs,
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      if (heldRenames-- > 0) throw windowsHeldFileError('EPERM', String(from), String(to))
      fs.renameSync(from, to)
    },
    openSync: ((file: fs.PathLike, flags: fs.OpenMode, mode?: fs.Mode) => {
      const fd = fs.openSync(file, flags, mode)
      if (fs.fstatSync(fd).isDirectory()) directoryFds.add(fd)
      return fd
    }) as typeof fs.openSync,
    fsyncSync: (fd: number) => {
      if (directoryFds.has(fd)) throw windowsDirectoryFsyncError()
      fs.fsyncSync(fd)
    },
    closeSync: (fd: number) => {
      directoryFds.delete(fd)
      fs.closeSync(fd)
    },
  }
}

const osOn = (platform: NodeJS.Platform): typeof os => ({ ...os, platform: () => platform })

/** Runs the checkpoint thread's body here, on FS and OS, for one request; resolves with its reply. */
async function checkpointOnce(fakeFs: typeof fs, fakeOs: typeof os, request: CheckpointRequest): Promise<CheckpointReply> {
  const { port1, port2 } = new MessageChannel()
  try {
    runCheckpointThread(fakeFs, path, fakeOs, port1, process.pid, false, { delaysMs: RENAME_RETRY_DELAYS_MS, codes: HELD_RENAME_CODES })
    const reply = new Promise<CheckpointReply>((resolve) => port2.once('message', resolve))
    port2.postMessage(request)
    return await reply
  } finally {
    port1.close()
    port2.close()
  }
}

describe('fs storage on Windows (emulated: Node\'s answers there, on this system)', () => {
  it('a journal\'s directory entry is not fsynced on Windows, where that fails with EPERM', async () => {
    const dir = await tempDir()
    const open = async () => ({ sync: async () => { throw windowsDirectoryFsyncError() }, close: async () => {} })
    await expect(fsyncDirectory(dir, { platform: 'win32', open })).resolves.toBeUndefined()
    // The same system elsewhere: the failure is real there, and said.
    await expect(fsyncDirectory(dir, { platform: 'linux', open })).rejects.toThrow(/EPERM/)
  })

  it('a checkpoint writes its files and deletes its journals on Windows, without a directory fsync', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, 'session'))
    await writeFile(join(dir, 'journal-7-000001.log'), 'records')
    const request = { id: 1, entries: [[join(dir, 'session', 'k1~default'), '{"n":1}']] as Array<[string, string | null]>, journals: [join(dir, 'journal-7-000001.log')] }
    const reply = await checkpointOnce(fsWithWindowsDirectorySync(), osOn('win32'), request)
    expect(reply).toEqual({ id: 1 })
    expect(await readFile(join(dir, 'session', 'k1~default'), 'utf8')).toBe('{"n":1}')
    expect(await readdir(dir)).not.toContain('journal-7-000001.log')
  })

  it('a checkpoint waits for a file that a scanner holds for a moment on Windows, rather than failing', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'journal-7-000001.log'), 'records')
    const target = join(dir, 'session', 'k1~default')
    const request = { id: 2, entries: [[target, '{"n":2}']] as Array<[string, string | null]>, journals: [join(dir, 'journal-7-000001.log')] }
    expect(await checkpointOnce(fsWithWindowsDirectorySync(3), osOn('win32'), request)).toEqual({ id: 2 })
    expect(await readFile(target, 'utf8')).toBe('{"n":2}')
    expect(await readdir(dir)).not.toContain('journal-7-000001.log')
    expect(await readdir(join(dir, 'session'))).toEqual(['k1~default'])
  })

  it('a rename held on Windows is tried again, a bounded number of times, and only for a held file', async () => {
    const tries: string[] = []
    const heldFor = (times: number, code: 'EPERM' | 'EBUSY' | 'EACCES' | 'ENOENT' = 'EPERM') => async (from: string, to: string) => {
      tries.push(code)
      if (tries.length <= times) throw code === 'ENOENT' ? Object.assign(new Error('ENOENT'), { code }) : windowsHeldFileError(code, from, to)
    }
    await renameReplacing('a.tmp', 'a', { platform: 'win32', rename: heldFor(2, 'EBUSY') })
    expect(tries).toHaveLength(3)
    tries.length = 0
    await expect(renameReplacing('a.tmp', 'a', { platform: 'win32', rename: heldFor(Infinity, 'EACCES') })).rejects.toMatchObject({ code: 'EACCES' })
    expect(tries).toHaveLength(RENAME_RETRY_DELAYS_MS.length + 1)
    tries.length = 0
    // Elsewhere EPERM is a real permission problem, and a missing file is missing anywhere: said at once.
    await expect(renameReplacing('a.tmp', 'a', { platform: 'linux', rename: heldFor(1) })).rejects.toMatchObject({ code: 'EPERM' })
    await expect(renameReplacing('a.tmp', 'a', { platform: 'win32', rename: heldFor(2, 'ENOENT') })).rejects.toMatchObject({ code: 'ENOENT' })
    expect(tries).toHaveLength(2)
  })

  it('a rename held on Windows for a tenth of a second (a scanner) succeeds: the tries are spread out, not spent at once', async () => {
    let tries = 0
    // Held from the first attempt on: a stall before it must not use up the hold.
    let releasedAt = Infinity
    const heldBriefly = async (from: string, to: string) => {
      if (tries++ === 0) releasedAt = Date.now() + 100
      if (Date.now() < releasedAt) throw windowsHeldFileError('EPERM', from, to)
    }
    await renameReplacing('a.tmp', 'a', { platform: 'win32', rename: heldBriefly })
    expect(tries).toBeGreaterThan(1)
  })
})
