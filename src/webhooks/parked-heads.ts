import type { SessionPatch } from '../server/session-doc.js'
import { findRetryDelay } from './retry-schedule.js'
import { isDueAt } from './waiting-deliveries.js'
import { reportRefusedAttempt, type DeliveryReport } from './delivery-report.js'
import { createDueQueue } from './due-queue.js'
import { applyHeldAttempts, type ParkedHead } from './parked-head.js'
import type { DeliveryTarget, WebhookState } from './types.js'

/** What parked heads need of the dispatcher. */
export interface ParkedHeadsOptions {
  retryScheduleMs: readonly number[]
  /** Tries to connect to `url` (or takes a recent refusal of it): the error, null if it connected. */
  probe(url: string, target: DeliveryTarget): Promise<{ error: string | null; durationMs: number }>
  /** A session whose heads need its worker: the receiver at `url` takes connections, or a last attempt is due. */
  wake(slot: string, url: string, target: DeliveryTarget): void
  onAttempt?: (report: DeliveryReport) => void
  logError: (error: unknown) => void
}

/** Heads due within this much of each other are retried in one turn, with one probe per URL. */
const BATCH_MS = 20
/**
 * Heads retried per turn at most: after a pause (a stopped process, a long collection) thousands
 * can be due at once, and counting them all in one go would hold up the requests waiting meanwhile.
 */
const HEADS_PER_TURN = 500

/**
 * The longest the turn timer sleeps. Timers run on a clock that stops while the machine sleeps
 * (a laptop's lid closed, a paused VM): a timer set for a 10 min retry fired 10 min after the
 * wake-up, however long ago the retry fell due. A turn at least this often also notices a wall
 * clock set back (see `catchUp`).
 */
const MAX_SLEEP_MS = 1000

/** When a head's delivery last changed: its last held attempt, or the document's version of it. */
function changedAt(head: ParkedHead): number {
  return head.held > 0 ? head.lastAt : Date.parse(head.baseUpdatedAt)
}

/**
 * Heads of sleeping sessions, retried by URL instead of by session: when a head is due, its URL is
 * probed once for every head due with it, and while the URL takes no connection the attempt is
 * only counted (one object per head, no timer, no document change). A dead receiver used to cost
 * every key a timer, a closure per retry and a rewritten document (~4.4 KB a key, kept 12.5 min).
 */
export function createParkedHeads(options: ParkedHeadsOptions) {
  const schedule = options.retryScheduleMs
  const bySlot = new Map<string, ParkedHead[]>()
  const queue = createDueQueue<ParkedHead>()
  let timer: NodeJS.Timeout | undefined
  let timerAt = Infinity
  let turning = false
  let stopped = false
  /** The latest wall time seen: a clock reading earlier was set back since. */
  let latest = Date.now()

  function arm(): void {
    const next = queue.peekNext()
    if (next === undefined || stopped || turning) return
    const now = Date.now()
    latest = Math.max(latest, now)
    // Heads left over from a full turn are due already: their turn follows at once.
    const at = Math.min(next + BATCH_MS <= now ? now : next + BATCH_MS, now + MAX_SLEEP_MS)
    if (timer && timerAt <= at) return
    clearTimeout(timer)
    timerAt = at
    timer = setTimeout(() => {
      timer = undefined
      timerAt = Infinity
      tick()
    }, Math.max(0, at - now))
    timer.unref()
  }

  /** A turn when the first heads' batch is due; otherwise (a wake-up of MAX_SLEEP_MS) the timer set again. */
  function tick(): void {
    const now = Date.now()
    if (now < latest) catchUp(now)
    latest = now
    const next = queue.peekNext()
    if (next !== undefined && next + BATCH_MS <= now) void turn()
    else arm()
  }

  /**
   * After the wall clock was set back: heads last changed after what it reads now are due at once
   * (isDueAt), rather than when the clock reaches their old due time again.
   */
  function catchUp(now: number): void {
    for (const head of queue.popDue(Infinity)) {
      if (isDueAt(head.next, changedAt(head), now)) head.next = Math.min(head.next, now)
      queue.push(head)
    }
  }

  /** Retries every head due now: one probe per URL; refused ones count an attempt, the rest wake their session. */
  async function turn(): Promise<void> {
    turning = true
    try {
      const due = queue.popDue(Date.now(), HEADS_PER_TURN).filter((head) => !head.released)
      // By target too: an endpoint's address is checked before connecting, a forward URL's is not.
      const byUrl = new Map<string, ParkedHead[]>()
      for (const head of due) {
        const key = `${head.target} ${head.url}`
        const list = byUrl.get(key)
        if (list) list.push(head)
        else byUrl.set(key, [head])
      }
      await Promise.all([...byUrl.values()].map(async (heads) => {
        const { error, durationMs } = await options.probe(heads[0]!.url, heads[0]!.target)
        const at = Date.now()
        for (const head of heads) {
          if (head.released || stopped) continue
          // A receiver that connects, or a last attempt (whose failure is written at once), needs the worker.
          const attempts = head.baseAttempts + head.held + 1
          const delay = findRetryDelay(schedule, attempts, head.scheduleBase)
          if (error === null || delay === undefined) {
            options.wake(head.slot, head.url, head.target)
            continue
          }
          head.held++
          head.lastError = error
          head.lastDurationMs = durationMs
          head.lastAt = at
          head.next = at + delay
          queue.push(head)
          options.onAttempt?.(reportRefusedAttempt(head, attempts, error, durationMs, new Date(at).toISOString(), head.next))
        }
      }))
    } catch (error) {
      options.logError(error)
    } finally {
      turning = false
      arm()
    }
  }

  return {
    /** Parks heads of a session (added to those already parked for it). */
    park(heads: ParkedHead[]): void {
      for (const head of heads) {
        const list = bySlot.get(head.slot)
        if (list) list.push(head)
        else bySlot.set(head.slot, [head])
        queue.push(head)
      }
      arm()
    },
    /** Whether the delivery `id` of the session is parked. */
    holds(slot: string, id: string): boolean {
      return bySlot.get(slot)?.some((head) => head.id === id) ?? false
    },
    isParked: (slot: string) => bySlot.has(slot),
    /** The session's webhook state with the attempts its parked heads hold. */
    overlay(slot: string, state: WebhookState): WebhookState {
      const heads = bySlot.get(slot)
      return heads ? applyHeldAttempts(state, heads, schedule) : state
    },
    /**
     * Unparks a session's heads: the change that writes their held attempts into its document (to
     * apply through the session store, under the session's mutex), or undefined if none is held.
     */
    release(slot: string): SessionPatch | undefined {
      const heads = bySlot.get(slot)
      if (!heads) return undefined
      bySlot.delete(slot)
      for (const head of heads) head.released = true
      if (!heads.some((head) => head.held > 0)) return undefined
      return (doc) => ({ ...doc, webhook: applyHeldAttempts(doc.webhook, heads, schedule) })
    },
    /**
     * The change that writes a session's held attempts into its document, after which its heads
     * stay parked holding none (their document version is then the one with those attempts).
     */
    checkpoint(slot: string): SessionPatch | undefined {
      const heads = bySlot.get(slot)?.filter((head) => head.held > 0)
      if (!heads?.length) return undefined
      const written = heads.map((head) => ({ ...head }))
      for (const head of heads) {
        head.baseAttempts += head.held
        head.baseUpdatedAt = new Date(head.lastAt).toISOString()
        head.held = 0
      }
      return (doc) => ({ ...doc, webhook: applyHeldAttempts(doc.webhook, written, schedule) })
    },
    slots: () => [...bySlot.keys()],
    stop(): void {
      stopped = true
      clearTimeout(timer)
      timer = undefined
    },
  }
}

/** Parked heads, as the dispatcher keeps them. */
export type ParkedHeads = ReturnType<typeof createParkedHeads>
