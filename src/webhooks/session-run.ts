import type { Principal } from '../server/auth.js'
import type { KeyedMutexLike } from '../server/services.js'
import type { SessionStore } from '../server/session-store.js'
import { principalOfSlot, type SessionDoc } from '../server/session-doc.js'
import type { createActiveMarkers } from './active-markers.js'
import type { createCommitMarkers } from './commit-markers.js'
import type { createDeliveryAttempts } from './delivery-attempts.js'
import { reportRun, type DeliveryReport } from './delivery-report.js'
import { findWork } from './find-work.js'
import type { createLiveEndpoints } from './live-endpoints.js'
import { toParkedHead } from './parked-head.js'
import type { ParkedHeads } from './parked-heads.js'
import type { RecentRefusals } from './recent-refusals.js'
import type { createAttemptRecorder, TriedDelivery } from './record-attempts.js'
import type { createSpillUpkeep } from './spill-upkeep.js'
import type { Delivery, DeliveryTarget, StoredEndpoint, WebhookState } from './types.js'
import type { createUnwrittenAttempts } from './unwritten-attempts.js'
import { isDue } from './waiting-deliveries.js'

/** What one run of a session's delivery worker works with: the dispatcher's parts. */
export interface SessionRunParts {
  sessions: SessionStore
  mutex: KeyedMutexLike
  /** `--webhook-forward-to`'s URL, when the server forwards. */
  forwardUrl: string | undefined
  live: ReturnType<typeof createLiveEndpoints>
  parked: ParkedHeads
  unwritten: ReturnType<typeof createUnwrittenAttempts>
  spill: ReturnType<typeof createSpillUpkeep>
  markers: ReturnType<typeof createActiveMarkers>
  commitMarkers: ReturnType<typeof createCommitMarkers>
  attempts: ReturnType<typeof createDeliveryAttempts>
  recent: RecentRefusals
  record: ReturnType<typeof createAttemptRecorder>
  wakeLater: (slot: string, delayMs: number) => void
  /** Resolves at the next kick of the session's worker while it runs (slot-workers.ts). */
  nextKick: (slot: string) => Promise<void>
  onDelivery?: (report: DeliveryReport) => void
  /** Whether the server has begun to stop: a run sends nothing more once it has. */
  isClosed: () => boolean
}

/**
 * One run of a session's delivery worker: sends what is due, in event order per target and each
 * target on its own, records the attempts, and goes back to sleep (parked or on a timer) until the
 * next head is due.
 */
export function createSessionRun(parts: SessionRunParts) {
  const { sessions, mutex, parked, live, attempts, recent } = parts
  const forwarding = parts.forwardUrl !== undefined

  /** Lets the worker sleep until the first of `heads` (none due now) is due: parked, or on a timer of its own. */
  function sleepUntilDue(slot: string, doc: SessionDoc, heads: Delivery[], now: number): void {
    const urls = heads.map((delivery) => (delivery.target === 'forward' ? parts.forwardUrl : doc.webhook.endpoint?.url))
    if (urls.every((url) => url !== undefined)) {
      parked.park(heads.map((delivery, i) => toParkedHead(slot, delivery, urls[i]!)))
      return
    }
    const wakeAt = Math.min(...heads.map((delivery) => Date.parse(delivery.next_attempt_at ?? '')))
    parts.wakeLater(slot, Math.max(0, wakeAt - now))
  }

  /** Reports each attempt of a worker's run, with its delivery as `webhook` (the state recorded) has it. */
  function reportOutcomes(outcomes: TriedDelivery[], webhook: WebhookState, finished: number): void {
    for (const report of reportRun(outcomes, webhook, finished)) parts.onDelivery?.(report)
  }

  async function workOn(slot: string, principal: Principal): Promise<void> {
    // The worker takes the session's parked heads back first, with the attempts they hold.
    if (parked.isParked(slot)) {
      await mutex.run(slot, async () => {
        const patch = parked.release(slot)
        if (patch) sessions.patch(principal, patch)
      })
    }
    // Attempts made whose record could not be written are written before anything more is sent.
    await parts.unwritten.write(slot, principal)
    // Each target's attempts run, and are recorded, on their own: the other target's next delivery
    // does not wait for them (a receiver that hangs held each delivery to the other one back by up
    // to 10 s), nor does the record of its accepted one (a kill -9 meanwhile sent it again).
    const sending = new Map<DeliveryTarget, Promise<void>>()
    /**
     * Targets a send of which was not made (withdrawn, or the server stopping), with the endpoint
     * it was made for: sent again once a document read has another one (the commit that withdrew
     * it; only a commit changes it), else by the rerun the kick of that commit asked for.
     */
    const stopped = new Map<DeliveryTarget, StoredEndpoint | null>()
    let failure: { error: unknown } | undefined
    try {
      while (!parts.isClosed() && !failure) {
        // Taken before the document is read: a kick while it is read or marked is not missed.
        const kicked = parts.nextKick(slot)
        const doc = await sessions.load(principal)
        const now = Date.now()
        const { dueRun, heads } = findWork(doc, forwarding)
        if (dueRun) {
          await parts.spill.restore(principal, dueRun.batch)
          continue
        }
        // Moved or re-registered: its send goes now, not once the other target's receiver answers (up to 10 s).
        for (const [target, endpoint] of stopped) if (endpoint !== doc.webhook.endpoint) stopped.delete(target)
        const idle = heads.filter((delivery) => !sending.has(delivery.target) && !stopped.has(delivery.target))
        const due = idle.filter((delivery) => isDue(delivery, now))
        if (heads.length > 0) await parts.markers.mark(slot, true)
        // An attempt whose record failed meanwhile: it is written before anything more is sent.
        if (failure || parts.isClosed()) break
        const endpointNow = () => live.current(slot, doc.webhook.endpoint)
        for (const delivery of due) {
          const { target } = delivery
          sending.set(target, attemptAndRecord(slot, principal, doc, delivery, endpointNow).then(
            (sent) => void (sent || stopped.set(target, doc.webhook.endpoint)),
            (error: unknown) => void (failure ??= { error }),
          ).finally(() => sending.delete(target)))
        }
        if (sending.size === 0) {
          if (heads.length === 0) await parts.commitMarkers.refreshMarker(slot, principal)
          // A send withdrawn: its endpoint's change kicked this worker, which runs again on the new document.
          else if (!heads.some((delivery) => stopped.has(delivery.target))) sleepUntilDue(slot, doc, heads, now)
          return
        }
        await waitForChange([...sending.values(), kicked], idle.filter((delivery) => !isDue(delivery, now)), now)
      }
    } finally {
      // The run ends only once every attempt it made is recorded: a run started after it would send them again.
      await Promise.all(sending.values())
    }
    if (failure) throw failure.error
  }

  /**
   * Waits for the first of `changes` (a send ending, a kick: a commit queued an event or changed
   * the endpoint) or for the first of `waiting` (heads not sending) to fall due.
   */
  async function waitForChange(changes: Promise<void>[], waiting: Delivery[], now: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const dueAt = Math.min(...waiting.map((delivery) => Date.parse(delivery.next_attempt_at ?? '')))
    const due = Number.isFinite(dueAt) ? [new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, dueAt - now))))] : []
    try {
      await Promise.race([...changes, ...due])
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Sends `delivery` once and records the attempt; resolves with whether it was sent. A send still
   * waiting for its place when the server began to stop was not made: no attempt to record, the
   * delivery keeps its turn for the next start. Nor was one its endpoint's change withdrew: that
   * commit kicked this worker, which runs again on the new document.
   */
  async function attemptAndRecord(slot: string, principal: Principal, doc: SessionDoc, delivery: Delivery, endpointNow: () => StoredEndpoint | null): Promise<boolean> {
    const outcome = await attempts.attempt(doc, delivery, endpointNow)
    if (outcome.notSent) return false
    const finished = Date.now()
    recent.note(outcome.url, outcome, finished)
    const outcomes = [{ delivery, outcome }]
    let updated: WebhookState
    try {
      updated = await parts.record(slot, principal, outcomes, finished)
    } catch (error) {
      // The receiver got this attempt whether or not its record is written: reported, and held
      // until it is, then the run fails and retries (writing it first) when storage answers.
      reportOutcomes(outcomes, await parts.unwritten.hold(slot, principal, outcomes, finished, doc.webhook), finished)
      throw error
    }
    reportOutcomes(outcomes, updated, finished)
    return true
  }

  /** Runs the worker of SLOT once, holding its session in memory meanwhile. */
  return async function runSession(slot: string): Promise<void> {
    const principal = principalOfSlot(slot)
    const release = sessions.hold(principal)
    try {
      await workOn(slot, principal)
    } finally {
      release()
    }
  }
}

