import { findHead } from './deliveries.js'
import { DELIVERY_TARGETS, type AttemptOutcome, type Delivery, type WebhookState } from './types.js'

/**
 * How long a URL that took no connection counts as still refusing: long enough that a dead
 * receiver costs one connection per moment rather than one per key (750 new keys a second in the
 * benchmark), short enough that a receiver just started is tried for real almost at once.
 */
export const SHARED_REFUSAL_MS = 250

/** A URL's last failure to connect: why, and when (ms since epoch). */
export interface Refusal {
  error: string
  at: number
}

/** Refusals held before the first sweep of stale ones (see `note`). */
const SWEEP_MIN_SIZE = 64

/** Remembers, per URL, the last attempt that could not connect, for SHARED_REFUSAL_MS. */
export function createRecentRefusals(windowMs = SHARED_REFUSAL_MS) {
  const byUrl = new Map<string, Refusal>()
  let sweepAt = SWEEP_MIN_SIZE

  /**
   * Too far from `now` to stand for an attempt made now, either way: one noted more than the
   * window later than `now` was noted before the wall clock was set back (NTP, a resumed VM), and
   * would otherwise stand for every attempt, a receiver back up never tried, until the clock
   * caught up with it, an hour for an hour back.
   */
  const isStale = (refusal: Refusal, now: number): boolean => Math.abs(now - refusal.at) > windowMs

  /**
   * Drops refusals too old to stand for an attempt. A URL nobody sends to again (a key's old
   * endpoint, a `sandbox run` receiver on a port of its own each run) is never looked up again,
   * so without this a server running for days kept one entry per such URL. Sweeping whenever the
   * map doubles keeps the cost per note constant.
   */
  function sweep(now: number): void {
    for (const [url, refusal] of byUrl) if (isStale(refusal, now)) byUrl.delete(url)
    sweepAt = Math.max(SWEEP_MIN_SIZE, byUrl.size * 2)
  }

  return {
    /** Takes note of an attempt's or probe's outcome: a refusal is remembered, a connection forgets it. */
    note(url: string, outcome: Pick<AttemptOutcome, 'error' | 'refused'>, at: number): void {
      if (outcome.refused && outcome.error !== null) {
        byUrl.set(url, { error: outcome.error, at })
        if (byUrl.size > sweepAt) sweep(at)
      } else byUrl.delete(url)
    },
    /** How many URLs' refusals are held (stale ones included until the next sweep). */
    get size(): number {
      return byUrl.size
    },
    /**
     * The URL's refusal if it is recent enough to stand for an attempt made now. A request takes
     * `now` when it starts, so a refusal noted while it ran is later than its `now` and still
     * stands: dropping it made the next new keys each connect again.
     */
    find(url: string, now: number): Refusal | undefined {
      const refusal = byUrl.get(url)
      if (refusal && isStale(refusal, now)) {
        byUrl.delete(url)
        return undefined
      }
      return refusal
    },
  }
}

/** A RecentRefusals made by createRecentRefusals. */
export type RecentRefusals = ReturnType<typeof createRecentRefusals>

/** The error recorded for an attempt that a recent refusal stands for. */
export function describeSharedRefusal(refusal: Refusal, now: number): string {
  return `${refusal.error} (this URL refused a connection ${Math.max(0, now - refusal.at)} ms before; not tried again)`
}

/**
 * The heads a commit made of its targets' queues (nothing of the target waited before) whose URL
 * refused a connection a moment ago: that refusal stands for their first attempt, so a dead
 * receiver costs each new key no worker and no connection of its own. A test event is always
 * tried for real: the partner sent it to see what their receiver does now.
 */
export function findSharedRefusals(before: WebhookState, after: WebhookState, findRefusal: (url: string) => Refusal | undefined, now: number): Array<{ delivery: Delivery; error: string }> {
  const shared: Array<{ delivery: Delivery; error: string }> = []
  if (before === after) return shared
  for (const target of DELIVERY_TARGETS) {
    const head = findHead(after, target)
    if (!head || head.attempts > 0 || head.event_type === 'sandbox.webhook.test') continue
    // Only deliveries this commit queued: one put back by the retry endpoint is tried for real.
    if (head.seq === undefined || head.seq < (before.next_seq ?? 0)) continue
    if (findHead(before, target) !== undefined || after.spilled?.some((run) => run.target === target)) continue
    const refusal = findRefusal(head.url)
    if (refusal) shared.push({ delivery: head, error: describeSharedRefusal(refusal, now) })
  }
  return shared
}
