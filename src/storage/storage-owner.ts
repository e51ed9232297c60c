import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'

/** The server that owns a storage (its data dir, or its redis database), as its lock records it. */
export interface StorageOwner {
  token: string
  pid: number
  host: string
  started_at: string
  /** Linux: the kernel's boot id, so that a record from before a reboot reads as gone. */
  boot_id?: string
  /** Linux: the process's start time in clock ticks since boot, so that a reused pid is told apart. */
  pid_start?: number
}

/** Tokens of the locks and leases this process holds now. */
const heldHere = new Set<string>()

/** A new owner record for this process (a fresh token per storage it opens). */
export function describeThisProcess(): StorageOwner {
  const owner: StorageOwner = { token: randomUUID(), pid: process.pid, host: hostname(), started_at: new Date().toISOString() }
  const bootId = readBootId()
  const pidStart = readProcStat(process.pid)?.start
  if (bootId) owner.boot_id = bootId
  if (pidStart !== undefined) owner.pid_start = pidStart
  return owner
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
 * restarted after a crash runs its server under the same pid (often 1) again. On Linux, a record
 * from an earlier boot, or whose pid now belongs to a process started at another time (the pid
 * was reused after a reboot or a container restart), is gone too.
 */
export function isOwnerGone(owner: StorageOwner): boolean {
  if (owner.host !== hostname()) return false
  if (owner.pid === process.pid) return !heldHere.has(owner.token)
  const bootId = readBootId()
  if (owner.boot_id && bootId && owner.boot_id !== bootId) return true
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ESRCH') return true
    // EPERM: another user's process, which may be one that reused the pid, or a zombie; /proc
    // tells those apart as for this user's own. Refused on that alone, such a lock needed deleting by hand.
    if (code !== 'EPERM') return false
  }
  const stat = readProcStat(owner.pid)
  if (!stat) return false
  // A killed process its parent has not reaped yet still answers kill(pid, 0) for a moment
  // (1.5 s under some inits): a zombie is gone.
  if (stat.state === 'Z') return true
  return owner.pid_start !== undefined && stat.start !== owner.pid_start
}

let bootIdRead: string | undefined | null = null

/** The kernel's boot id (Linux), read once. */
function readBootId(): string | undefined {
  if (bootIdRead === null) {
    try {
      bootIdRead = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined
    } catch {
      bootIdRead = undefined
    }
  }
  return bootIdRead
}

let procIsOurs: boolean | undefined

/**
 * A process's state letter and start time (clock ticks since boot) from /proc (Linux). Nothing
 * when /proc shows another pid namespace (`unshare --pid` without a /proc of its own): its
 * entries would describe other processes than the pids this process sees.
 */
function readProcStat(pid: number): { state: string; start: number } | undefined {
  if (procIsOurs === undefined) {
    try {
      procIsOurs = readFileSync('/proc/self/stat', 'utf8').startsWith(`${process.pid} `)
    } catch {
      procIsOurs = false
    }
  }
  if (!procIsOurs) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // "pid (comm) S ppid ...": the command name may itself hold ") ", so fields count from the
    // last one; the state is field 3 and the start time field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const start = Number(fields[19])
    return Number.isFinite(start) ? { state: fields[0]!, start } : undefined
  } catch {
    return undefined
  }
}

/** "pid 123 on host, since 2026-11-25T10:00:00.000Z" */
export function describeOwner(owner: StorageOwner): string {
  const where = owner.host === hostname() ? '' : ` on ${owner.host}`
  return `pid ${owner.pid}${where}${owner.started_at ? `, since ${owner.started_at}` : ''}`
}
