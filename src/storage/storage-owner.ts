import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

/** The server that owns a storage (its data dir, or its redis database), as its lock records it. */
export interface StorageOwner {
  token: string
  pid: number
  host: string
  started_at: string
}

/** Tokens of the locks and leases this process holds now. */
const heldHere = new Set<string>()

/** A new owner record for this process (a fresh token per storage it opens). */
export function describeThisProcess(): StorageOwner {
  return { token: randomUUID(), pid: process.pid, host: hostname(), started_at: new Date().toISOString() }
}

/** Marks an owner record of this process as held (true) or given up (false). */
export function markHeld(owner: StorageOwner, held: boolean): void {
  if (held) heldHere.add(owner.token)
  else heldHere.delete(owner.token)
}

/** Reads an owner record; undefined if the text is not one. */
export function parseOwner(text: string | null | undefined): StorageOwner | undefined {
  if (!text) return undefined
  try {
    const owner = JSON.parse(text) as Partial<StorageOwner>
    if (typeof owner.token === 'string' && typeof owner.pid === 'number' && typeof owner.host === 'string') return owner as StorageOwner
  } catch {}
  return undefined
}

/**
 * Whether the owner is certainly gone: a process of this host that no longer runs (a server
 * killed with -9 leaves its record behind). An owner on another host cannot be checked. A record
 * with this process's pid that this process does not hold is an earlier process's: a container
 * restarted after a crash runs its server under the same pid (often 1) again.
 */
export function isOwnerGone(owner: StorageOwner): boolean {
  if (owner.host !== hostname()) return false
  if (owner.pid === process.pid) return !heldHere.has(owner.token)
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
  return isZombie(owner.pid)
}

/**
 * A process killed with -9 whose parent has not reaped it yet still answers kill(pid, 0) for a
 * moment (1.5 s under some inits): on Linux, /proc tells that it is a zombie, that is, gone.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // "pid (comm) S ...": the state follows the command name, which may itself hold ") ".
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z'
  } catch {
    return false
  }
}

/** "pid 123 on host, since 2026-11-25T10:00:00.000Z" */
export function describeOwner(owner: StorageOwner): string {
  const where = owner.host === hostname() ? '' : ` on ${owner.host}`
  return `pid ${owner.pid}${where}${owner.started_at ? `, since ${owner.started_at}` : ''}`
}
