import { promises as fsp } from 'node:fs'
import { join } from 'node:path'
import { StorageError } from './storage-error.js'
import { describeOwner, describeThisProcess, isOwnerGone, markHeld, parseOwner } from './storage-owner.js'

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
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await fsp.link(temp, path)
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      const holder = parseOwner(await fsp.readFile(path, 'utf8').catch(() => null))
      // A lock that vanished meanwhile, or one of a dead process, is tried again. Taking over a
      // dead one's lock is not atomic: two servers started in the same instant over it could both
      // get it, far rarer than what the lock is for, a second server started later.
      if (attempt < 2 && (!holder || isOwnerGone(holder))) {
        if (holder) await fsp.unlink(path).catch(() => {})
        continue
      }
      const who = holder ? `another sandbox server (${describeOwner(holder)})` : 'another sandbox server'
      throw new StorageError(`data dir ${dir} is in use by ${who}; stop it, or give this one another --data-dir. If no server runs there, delete ${path}`)
    }
  } finally {
    await fsp.unlink(temp).catch(() => {})
  }
  markHeld(owner, true)
  return {
    async release() {
      markHeld(owner, false)
      const holder = parseOwner(await fsp.readFile(path, 'utf8').catch(() => null))
      if (holder?.token === owner.token) await fsp.unlink(path).catch(() => {})
    },
  }
}
