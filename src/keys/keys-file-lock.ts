import { promises as fsp } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createDirectory } from '../files/create-directory.js'
import { createKeyedMutex } from '../storage/keyed-mutex.js'
import { describeOwner, describeThisProcess, isOwnerGone, markHeld, parseOwner, type StorageOwner } from '../storage/storage-owner.js'
import { KeysError } from './keys-error.js'
import { resolveLinks } from './write-keys-file.js'

/** How long a change to a keys file waits for another process's lock on it before giving up. */
export const KEYS_LOCK_TIMEOUT_MS = 10_000

/**
 * How old a lock file that names no owner must be to count as abandoned. The owner is written
 * right after the file is made, so only a process killed in between (or a full disk) leaves one.
 */
const UNWRITTEN_LOCK_MS = 2_000

/** Waits between tries: short at first (a keys command holds the lock for milliseconds). */
const RETRY_DELAYS_MS = [2, 5, 10, 20, 40, 80]
const MAX_RETRY_DELAY_MS = 100

/** Calls of this process, one at a time per keys file: the lock file alone would let them in together. */
const inProcess = createKeyedMutex()

interface LockState {
  /** null when it cannot be read */
  text: string | null
  ino: number
  mtimeMs: number
  owner: StorageOwner | undefined
}

/**
 * Runs WORK (a read, change and write of the keys file at PATH) while holding the file's lock, so
 * that two `sandbox keys` commands at once cannot both read the old file and the later write drop
 * the earlier's change. The lock is PATH's real file (through symbolic links) plus `.lock`, made
 * with O_EXCL and naming this process; one whose process is gone (killed) is taken over. Throws a
 * KeysError naming the lock file when another process holds it for longer than `timeoutMs`.
 */
export async function withKeysFileLock<T>(path: string, work: () => Promise<T>, options: { timeoutMs?: number } = {}): Promise<T> {
  let target: string
  try {
    target = resolve(await resolveLinks(path))
    await createDirectory(dirname(target))
  } catch (error) {
    throw new KeysError(`cannot write keys file ${path}: ${(error as Error).message}`, { cause: error })
  }
  return inProcess.run(target, async () => {
    const release = await acquireLock(path, `${target}.lock`, options.timeoutMs ?? KEYS_LOCK_TIMEOUT_MS)
    try {
      return await work()
    } finally {
      await release()
    }
  })
}

async function acquireLock(path: string, lock: string, timeoutMs: number): Promise<() => Promise<void>> {
  const owner = describeThisProcess()
  // Held before the file exists: isOwnerGone reads a record of this pid that is not held as a dead one's.
  markHeld(owner, true)
  const deadline = performance.now() + timeoutMs
  try {
    for (let attempt = 0; !(await createLockFile(path, lock, owner)); attempt++) {
      const state = await readLockState(lock)
      if (!state) continue
      const abandoned = isAbandoned(state)
      // Checked for an abandoned lock too: one that cannot be deleted must not keep this waiting forever.
      if (performance.now() >= deadline) throw describeTimeout(path, lock, state, abandoned, timeoutMs)
      if (abandoned) {
        await removeAbandoned(lock, state, owner)
        continue
      }
      const delay = RETRY_DELAYS_MS[attempt] ?? MAX_RETRY_DELAY_MS
      // Jitter, so that processes which met at one lock do not keep trying in step.
      await sleep(delay / 2 + Math.random() * delay)
    }
  } catch (error) {
    markHeld(owner, false)
    throw error
  }
  return async () => {
    markHeld(owner, false)
    if ((await readLockState(lock))?.owner?.token === owner.token) await fsp.unlink(lock).catch(() => {})
  }
}

function describeTimeout(path: string, lock: string, state: LockState, abandoned: boolean, timeoutMs: number): KeysError {
  if (abandoned) return new KeysError(`keys file ${path} has a lock left by a process that is gone, and it could not be taken over within ${timeoutMs / 1000} s: delete ${lock}`)
  const who = state.owner ? `another process (${describeOwner(state.owner)})` : 'another process'
  return new KeysError(`keys file ${path} is locked by ${who}, which is changing it, for more than ${timeoutMs / 1000} s; try again once it has finished. If no sandbox keys command is running, delete ${lock}`)
}

/** Creates the lock file naming OWNER; false if it exists already. */
async function createLockFile(path: string, lock: string, owner: StorageOwner): Promise<boolean> {
  let handle: fsp.FileHandle
  try {
    handle = await fsp.open(lock, 'wx')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    throw new KeysError(`cannot write keys file ${path}: cannot create its lock ${lock} (${code ?? (error as Error).message})`, { cause: error })
  }
  try {
    await handle.writeFile(JSON.stringify(owner))
  } catch (error) {
    await handle.close().catch(() => {})
    await fsp.unlink(lock).catch(() => {})
    throw new KeysError(`cannot write keys file ${path}: cannot write its lock ${lock}: ${(error as Error).message}`, { cause: error })
  }
  await handle.close()
  return true
}

/** The lock file as it is now; undefined once it is gone. */
async function readLockState(lock: string): Promise<LockState | undefined> {
  const info = await fsp.stat(lock).catch(() => undefined)
  if (!info) return undefined
  // Unreadable (another user's, say): then it names no owner, and must not read as an unwritten one.
  const text = await fsp.readFile(lock, 'utf8').catch(() => null)
  return { text, ino: info.ino, mtimeMs: info.mtimeMs, owner: parseOwner(text) }
}

/** Whether the process that made a lock (or guard) file is certainly gone. */
function isAbandoned(state: LockState): boolean {
  if (state.owner) return isOwnerGone(state.owner)
  return state.text !== null && Date.now() - state.mtimeMs > UNWRITTEN_LOCK_MS
}

/**
 * Deletes an abandoned lock if it is still the one seen. Without the guard, two processes that
 * both saw it abandoned raced: the later one's delete could remove the lock the first had just
 * made, and both changed the file. The guard lets one process at a time check and delete (as
 * data-dir-lock.ts does for a server's data dir).
 */
async function removeAbandoned(lock: string, seen: LockState, owner: StorageOwner): Promise<void> {
  const guard = `${lock}.takeover`
  try {
    await fsp.writeFile(guard, JSON.stringify(owner), { flag: 'wx' })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EEXIST') throw new KeysError(`cannot take over the abandoned lock ${lock}: cannot create ${guard} (${code ?? (error as Error).message})`, { cause: error })
    // Left by a process killed inside its takeover, or in use now.
    const state = await readLockState(guard)
    if (state && isAbandoned(state)) await fsp.unlink(guard).catch(() => {})
    else await sleep(5)
    return
  }
  try {
    const current = await readLockState(lock)
    if (current && current.ino === seen.ino && current.text === seen.text) await fsp.unlink(lock).catch(() => {})
  } finally {
    await fsp.unlink(guard).catch(() => {})
  }
}
