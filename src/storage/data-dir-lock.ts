import { promises as fsp } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { StorageError } from './storage-error.js'
import { describeOwner, describeThisProcess, isOwnerGone, markHeld, parseOwner, type StorageOwner } from './storage-owner.js'

/** The lock file a server keeps in the data dir it owns. */
export const LOCK_FILE = 'server.lock'

/**
 * Makes this process the one server of a data dir, or fails with a StorageError naming the
 * server that has it: two servers on one dir would each cache documents the other overwrites.
 * A lock left by a process of this host that no longer runs (kill -9) is taken over. The lock is
 * created by a hard link of a complete file, so it is never seen half written.
 */
export async function lockDataDir(dir: string): Promise<{ release(): Promise<void> }> {
  const path = join(dir, LOCK_FILE)
  const owner = describeThisProcess()
  const temp = `${path}.${owner.token}.tmp`
  await fsp.writeFile(temp, JSON.stringify(owner))
  // Held before it is linked: another opener in this process must not read it as a dead one's.
  markHeld(owner, true)
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await fsp.link(temp, path)
        break
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        // The server that holds the dir deletes temp files when it starts, this one's included.
        if (code === 'ENOENT' && attempt < 20) {
          await fsp.writeFile(temp, JSON.stringify(owner))
          continue
        }
        if (code !== 'EEXIST') throw code === 'ENOENT' ? error : noLinkError(dir, path, error as NodeJS.ErrnoException)
      }
      const text = await fsp.readFile(path, 'utf8').catch(() => null)
      const holder = parseOwner(text)
      // Locks are linked whole, so one that reads but names no server was damaged, not half written.
      if (text !== null && !holder) {
        throw new StorageError(`data dir ${dir} has a lock file that names no server (damaged): if no sandbox server runs on this dir, delete ${path}`)
      }
      if (attempt < 20 && (!holder || isOwnerGone(holder))) {
        if (holder) await removeStaleLock(path, holder, owner)
        continue
      }
      const who = holder ? `another sandbox server (${describeOwner(holder)})` : 'another sandbox server'
      throw new StorageError(`data dir ${dir} is in use by ${who}; stop it, or give this one another data dir (--data-dir). If no server runs there, delete ${path}`)
    }
  } catch (error) {
    markHeld(owner, false)
    throw error
  } finally {
    await fsp.unlink(temp).catch(() => {})
  }
  return {
    async release() {
      markHeld(owner, false)
      const holder = parseOwner(await fsp.readFile(path, 'utf8').catch(() => null))
      if (holder?.token === owner.token) await fsp.unlink(path).catch(() => {})
    },
  }
}

/** Whether a server that may still run holds the data dir's lock (a damaged lock counts as held). */
export async function isDataDirInUse(dir: string): Promise<boolean> {
  const text = await fsp.readFile(join(dir, LOCK_FILE), 'utf8').catch(() => null)
  if (text === null) return false
  const holder = parseOwner(text)
  return !holder || !isOwnerGone(holder)
}

/**
 * Why the lock could not be linked: a file system without hard links, most often. FAT32 and
 * exFAT drives have none (on Windows the link fails with EISDIR, libuv's reading of
 * ERROR_INVALID_FUNCTION; on Linux with EPERM), nor have some network shares. Thrown as it was,
 * serve said "unexpected error" with a stack (exit 1), as for a bug.
 */
function noLinkError(dir: string, path: string, error: NodeJS.ErrnoException): StorageError {
  return new StorageError(`data dir ${dir}: cannot create its lock ${path} (${error.code ?? error.message}); the lock is a hard link, which FAT32 and exFAT drives and some network shares do not have: on one of those, use a data dir on another drive (--data-dir), or --storage memory`, { cause: error })
}

/**
 * Deletes the lock of a gone owner, if it is still that one's. Two servers starting over the same
 * stale lock would otherwise race: the later one's delete could remove the lock the first had
 * just made, and both would run. A guard file lets one process at a time check and delete.
 */
async function removeStaleLock(path: string, stale: StorageOwner, owner: StorageOwner): Promise<void> {
  const guard = `${path}.takeover`
  try {
    await fsp.writeFile(guard, JSON.stringify(owner), { flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    // Left by a process killed inside its takeover (a few microseconds), or in use now.
    const guardOwner = parseOwner(await fsp.readFile(guard, 'utf8').catch(() => null))
    if (guardOwner && isOwnerGone(guardOwner)) await fsp.unlink(guard).catch(() => {})
    else await sleep(5)
    return
  }
  try {
    const current = parseOwner(await fsp.readFile(path, 'utf8').catch(() => null))
    if (current?.token === stale.token) await fsp.unlink(path).catch(() => {})
  } finally {
    await fsp.unlink(guard).catch(() => {})
  }
}
