import type { Redis } from 'ioredis'
import { StorageError } from './storage-error.js'
import { describeOwner, describeThisProcess, isOwnerGone, markHeld, parseOwner } from './storage-owner.js'

/** How long a lease lasts unless renewed: a server that died unnoticed frees the database then. */
export const LEASE_MS = 15_000
const RENEW_MS = 5_000

// Compare-and-act on the lease key, so that a server never renews or deletes another's lease.
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
const REPLACE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) else return false end"
// Renews the lease, or takes a lapsed one back if no other server held it meanwhile (KEYS[2]
// names the last to take it; gone only if redis lost its data, when there is nothing newer to miss
// either). One script rather than a renewal, a retake and a read: renewals of one server sent
// together (its timer's and a write's check, all waiting on a paused redis) each saw the lease
// lapsed, and the one that lost the retake read its own lease back as another server's. Answers 1
// while the lease is this server's (2 when taken back with KEYS[2] gone: redis lost its data),
// else the value another holds, or nil if nobody holds it but another server did meanwhile.
const KEEP = "local held = redis.call('get', KEYS[1]) if held == ARGV[1] then redis.call('pexpire', KEYS[1], ARGV[2]) return 1 end if held then return held end local last = redis.call('get', KEYS[2]) if last and last ~= ARGV[1] then return false end redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) redis.call('set', KEYS[2], ARGV[1]) if last then return 1 end return 2"
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

/** A held lease: renewed in the background until released. */
export interface RedisLease {
  /** Set once another server holds the lease: this one must stop using the database. */
  readonly lostTo: string | undefined
  /** Renews at once (after a reconnection, when the lease may have lapsed), or joins the renewal under way. */
  renew(): Promise<void>
  /**
   * Before a write: renews first when the renewals have fallen behind (the process was paused, a
   * laptop slept), so that a write never lands after another server took the database over
   * meanwhile. Undefined (nothing to wait for) while the renewals keep up.
   */
  confirm(): Promise<void> | undefined
  release(): Promise<void>
}

/**
 * Makes this process the one server of a redis database (key `key`), or fails with a
 * StorageError naming the server that has it: two servers on one database would each cache
 * documents the other overwrites. A lease of a process of this host that no longer runs is taken
 * over at once; any other lapses LEASE_MS after its server stopped renewing it. `warn` is told
 * when the lease is lost to another server, and when redis lost the sandbox's keys (lease kept).
 */
export async function takeRedisLease(client: Redis, key: string, where: string, warn: (message: string) => void): Promise<RedisLease> {
  const owner = describeThisProcess()
  const value = JSON.stringify(owner)
  let taken = false
  let holder: ReturnType<typeof parseOwner>
  // Renewed once (a no-op: nobody holds this value) before anything is taken: a redis user that
  // may not EVAL would hold a lease it can never renew, and a second server would take the
  // database over beside it once the lease lapsed.
  await client.eval(RENEW, 1, key, value, LEASE_MS)
  for (let attempt = 0; attempt < 3 && !taken; attempt++) {
    taken = (await client.set(key, value, 'PX', LEASE_MS, 'NX')) !== null
    if (taken) break
    const held = await client.get(key)
    // Lapsed meanwhile: try again.
    if (held === null) continue
    holder = parseOwner(held)
    if (holder && !isOwnerGone(holder)) break
    // A dead process's lease (or a value that is no lease): replaced only if still the same.
    taken = Boolean(await client.eval(REPLACE, 1, key, held, value, LEASE_MS))
  }
  if (!taken) {
    const who = holder ? `another sandbox server (${describeOwner(holder)})` : 'another sandbox server'
    throw new StorageError(`redis ${where} is in use by ${who}; stop it, or give this one another database (the number after the port in the URL). A server that died frees it within ${LEASE_MS / 1000} s`)
  }
  markHeld(owner, true)
  // Who took the lease last, so that one taken back after a lapse can tell whether another server
  // had it in between (and wrote what this one's documents in memory do not hold).
  await client.set(`${key}:last`, value)

  let lostTo: string | undefined
  let released = false
  // Both clocks: the monotonic one runs on through a stopped process, the wall clock through a
  // suspended machine.
  let renewedAt = { wall: Date.now(), mono: performance.now() }
  const renewed = () => {
    renewedAt = { wall: Date.now(), mono: performance.now() }
  }
  async function keep(): Promise<void> {
    try {
      const held: unknown = await client.eval(KEEP, 2, key, `${key}:last`, value, LEASE_MS)
      if (held === 1) return renewed()
      if (held === 2) {
        renewed()
        // Said rather than only "connection restored": the state of keys not held in memory is gone with it.
        return warn(`redis ${where}: the sandbox's keys are gone from this database (redis restarted without persistence, or flushed or evicted them): keys whose state this server does not hold in memory start again from an empty state, and sandbox logs lacks the requests before`)
      }
      const current = parseOwner(typeof held === 'string' ? held : null)
      if (current) {
        lostTo = describeOwner(current)
        warn(`redis ${where}: another sandbox server (${lostTo}) took this database over; this server answers 500 SANDBOX_API_KEY_DATABASE_REQUIRED from now on. Stop one of them`)
      } else {
        lostTo = 'one that ran while this one was paused'
        warn(`redis ${where}: another sandbox server used this database while this one was paused, so the documents this one holds in memory may be out of date; it answers 500 SANDBOX_API_KEY_DATABASE_REQUIRED from now on. Restart it`)
      }
    } catch {
      // Connection trouble: told by the connection's own status; renewed once it is back.
    }
  }
  // One renewal at a time, shared by the timer, a write's check and a reconnection: one that
  // waits on a paused redis is joined rather than sent again behind it.
  let renewing: Promise<void> | undefined
  function renew(): Promise<void> {
    if (released || lostTo !== undefined || client.status !== 'ready') return Promise.resolve()
    renewing ??= keep().finally(() => {
      renewing = undefined
    })
    return renewing
  }
  const timer = setInterval(() => void renew(), RENEW_MS)
  timer.unref()
  function confirm(): Promise<void> | undefined {
    const behind = Math.max(Date.now() - renewedAt.wall, performance.now() - renewedAt.mono)
    if (behind < RENEW_MS * 2 || released || lostTo !== undefined) return undefined
    return renew()
  }
  return {
    get lostTo() {
      return lostTo
    },
    renew,
    confirm,
    async release() {
      released = true
      markHeld(owner, false)
      clearInterval(timer)
      if (lostTo === undefined) await client.eval(RELEASE, 1, key, value).catch(() => {})
    },
  }
}
