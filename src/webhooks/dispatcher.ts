import type { Storage } from 'unstorage'
import type { Principal } from '../server/auth.js'
import type { KeyedMutexLike } from '../server/services.js'
import type { SessionStore } from '../server/session-store.js'
import { principalOfSlot, sessionSlotOf, type SessionDoc } from '../server/session-doc.js'
import { createId } from '../server/ids.js'
import { enqueueEvents, findHead, hasUndelivered, listTargets, needsDispatch, recordAttempt } from './deliveries.js'
import { createConnectionPool } from './connection-pool.js'
import { stringifyEvent } from './event-json.js'
import { reportAttempt, reportRefusedAttempt, type DeliveryReport } from './delivery-report.js'
import { createParkedHeads, toParkedHead, type ParkedHead } from './parked-heads.js'
import { createRecentRefusals, describeSharedRefusal, findSharedRefusals } from './recent-refusals.js'
import { probeConnection, sendWebhook, type SendOptions } from './sender.js'
import { createStagedWrites } from './staged-writes.js'
import { findDueRun } from './delivery-spill.js'
import { createSpillUpkeep } from './spill-upkeep.js'
import { signWebhook } from './signature.js'
import { DELIVERY_TARGETS, type AttemptOutcome, type Delivery, type DeliveryTarget, type WebhookState } from './types.js'
import { isForbiddenAddress } from './url-policy.js'

const ACTIVE_PREFIX = 'webhooks:active'
/** How long failed attempts are kept in memory before they are written (see `work`). */
const FLUSH_DELAY_MS = 1000
/** When a worker fails (storage trouble), how long until it tries again. */
const WORKER_RETRY_MS = 2000

export type { DeliveryReport } from './delivery-report.js'

/** A session document ready to write, with the heads whose first attempt a recent refusal stands for (see `prepareWrite`). */
export interface PreparedWrite {
  doc: SessionDoc
  reports: DeliveryReport[]
  parked: ParkedHead[]
}

/** Options of the dispatcher. */
export interface DispatcherOptions {
  storage: Storage
  sessions: SessionStore
  mutex: KeyedMutexLike
  retryScheduleMs: readonly number[]
  /** Whether the storage outlives the process; without it there is no restart to resume deliveries after. */
  persistent: boolean
  /** `--allow-local-webhooks`: do not refuse local or private addresses at delivery time. */
  allowLocal: boolean
  forward?: { url: string; secret: string }
  timeoutMs?: number
  /** Host name resolver for the delivery-time address check (default: system DNS). */
  resolveHost?: (host: string) => Promise<string[]>
  onDelivery?: (report: DeliveryReport) => void
  logError: (error: unknown) => void
}

/**
 * Delivers the events each session's commits queue: one worker per session, attempts in event
 * order per target, retries on the schedule, progress written back through the session's mutex.
 * It runs beside the API, never inside a request, so slow or dead receivers cost requests nothing.
 */
export function createDispatcher(options: DispatcherOptions) {
  const { sessions, mutex, storage } = options
  const running = new Map<string, Promise<void>>()
  const again = new Set<string>()
  const timers = new Map<string, NodeJS.Timeout>()
  /** Sessions known to have deliveries waiting; each also has a marker key in storage. */
  const active = new Set<string>()
  const markerWrites = new Set<Promise<unknown>>()
  const pool = createConnectionPool()
  /** Endpoint addresses are checked when sending (DNS can change) unless local webhooks are allowed. */
  const checkedSend: SendOptions = { isForbidden: isForbiddenAddress, resolve: options.resolveHost, timeoutMs: options.timeoutMs, pool }
  const openSend: SendOptions = { timeoutMs: options.timeoutMs, pool }
  const sendOptionsFor = (target: DeliveryTarget): SendOptions => (target === 'endpoint' && !options.allowLocal ? checkedSend : openSend)
  const recent = createRecentRefusals()
  /** Heads of sleeping workers, retried by URL (parked-heads.ts); a worker that runs takes its own back first. */
  const parked = createParkedHeads({
    retryScheduleMs: options.retryScheduleMs,
    probe: probeUrl,
    wake: (slot) => kick(principalOfSlot(slot)),
    onAttempt: options.onDelivery,
    logError: options.logError,
  })
  /** Failed attempts to retry are recorded in memory and written a moment later (see `work`). */
  const staged = createStagedWrites({ sessions, mutex, delayMs: FLUSH_DELAY_MS, flushOnClose: options.persistent, logError: options.logError })
  const spill = createSpillUpkeep({ sessions, mutex, logError: options.logError })
  let closed = false

  /** Moves a commit's new events into deliveries, in the same document (called before saving). */
  function prepareCommit(doc: SessionDoc, now: string): SessionDoc {
    if (doc.outbox.length === 0) return doc
    const targets = listTargets(doc.webhook.endpoint, options.forward)
    return { ...doc, outbox: [], webhook: enqueueEvents(doc.webhook, doc.outbox, targets, now, createId) }
  }

  /**
   * prepareCommit for a request's commit (`base` is the webhook state the request started from):
   * a new queue head whose URL refused a connection a moment ago gets that refusal as its first
   * attempt, held by the head parked for its retry rather than written (recent-refusals.ts).
   */
  function prepareWrite(principal: Principal, doc: SessionDoc, base: WebhookState, now: number): PreparedWrite {
    const at = new Date(now).toISOString()
    const prepared = prepareCommit(doc, at)
    const shared = findSharedRefusals(base, prepared.webhook, (url) => recent.find(url, now), now)
    if (shared.length === 0) return { doc: prepared, reports: [], parked: [] }
    const slot = sessionSlotOf(principal)
    const next = now + options.retryScheduleMs[0]!
    const heads = shared.map(({ delivery, error }) => ({ ...toParkedHead(slot, delivery, delivery.url), held: 1, lastError: error, lastAt: now, next }))
    const reports = options.onDelivery ? shared.map(({ delivery, error }) => reportRefusedAttempt(delivery, 1, error, 0, at)) : []
    return { doc: prepared, reports, parked: heads }
  }

  /**
   * After a commit's write (`before` is the webhook state it started from), under the session's
   * mutex: reports the attempts recent refusals stood for and parks their heads, and wakes the
   * session's worker if the commit gave it something to do now. When every head is parked, the
   * worker is not started at all.
   */
  function committed(principal: Principal, before: WebhookState, written: PreparedWrite): void {
    for (const report of written.reports) options.onDelivery?.(report)
    if (closed) return
    if (written.parked.length > 0) parked.park(written.parked)
    if (!needsDispatch(before, written.doc.webhook)) return
    const slot = sessionSlotOf(principal)
    if (written.parked.length > 0 && !running.has(slot)) {
      const { dueRun, heads } = findWork(written.doc)
      if (!dueRun && heads.every((delivery) => parked.holds(slot, delivery.id))) {
        void markActive(slot, true)
        return
      }
    }
    kick(principal)
  }

  async function probeUrl(url: string, target: DeliveryTarget): Promise<{ error: string | null; durationMs: number }> {
    const refusal = recent.find(url, Date.now())
    if (refusal) return { error: describeSharedRefusal(refusal, Date.now()), durationMs: 0 }
    const started = performance.now()
    const error = await probeConnection(url, sendOptionsFor(target))
    recent.note(url, { error, refused: error !== null }, Date.now())
    return { error, durationMs: Math.round((performance.now() - started) * 10) / 10 }
  }

  /**
   * A session's next work: a spilled batch whose turn has come, or the heads of its queues. A
   * server started without a forward target leaves the forward queue as it is (its marker too), so
   * a start without `--webhook-forward-to` spends none of its attempts and the next one with it
   * resumes them.
   */
  function findWork(doc: SessionDoc) {
    const targets = DELIVERY_TARGETS.filter((target) => (target === 'forward' ? options.forward !== undefined : doc.webhook.endpoint?.enabled))
    const dueRun = targets.map((target) => findDueRun(doc.webhook, target)).find((run) => run !== undefined)
    const heads = targets
      .map((target) => findHead(doc.webhook, target))
      .filter((delivery): delivery is Delivery => delivery !== undefined)
    return { dueRun, heads }
  }

  /** Lets the worker sleep until the first of `heads` (none due now) is due: parked, or on a timer of its own. */
  function sleepUntilDue(slot: string, doc: SessionDoc, heads: Delivery[], now: number): void {
    const urls = heads.map((delivery) => (delivery.target === 'forward' ? options.forward?.url : doc.webhook.endpoint?.url))
    if (urls.every((url) => url !== undefined)) {
      parked.park(heads.map((delivery, i) => toParkedHead(slot, delivery, urls[i]!)))
      return
    }
    const wakeAt = Math.min(...heads.map((delivery) => Date.parse(delivery.next_attempt_at ?? '')))
    wakeLater(slot, Math.max(0, wakeAt - now))
  }

  /** Starts (or re-runs) the worker of a session after a commit that left deliveries to send. */
  function kick(principal: Pick<Principal, 'keyId' | 'sessionId'>): void {
    if (closed) return
    const slot = sessionSlotOf(principal)
    const timer = timers.get(slot)
    if (timer) {
      clearTimeout(timer)
      timers.delete(slot)
    }
    if (running.has(slot)) {
      again.add(slot)
      return
    }
    const run = work(slot).catch((error) => {
      options.logError(error)
      // Commits wake the worker only when they add work, so a failed worker must wake itself.
      if (!closed) wakeLater(slot, WORKER_RETRY_MS)
    }).finally(() => {
      running.delete(slot)
      if (again.delete(slot)) kick(principal)
    })
    running.set(slot, run)
  }

  function wakeLater(slot: string, delayMs: number): void {
    clearTimeout(timers.get(slot))
    const timer = setTimeout(() => {
      timers.delete(slot)
      kick(principalOfSlot(slot))
    }, delayMs)
    timer.unref()
    timers.set(slot, timer)
  }

  /**
   * One small marker key per session with deliveries waiting, so a restart finds them without
   * reading every session, and marking one costs the same however many there are.
   */
  async function markActive(slot: string, isActive: boolean): Promise<void> {
    if (active.has(slot) === isActive) return
    if (isActive) active.add(slot)
    else active.delete(slot)
    if (!options.persistent) return
    const key = `${ACTIVE_PREFIX}:${slot}`
    const write = (isActive ? storage.setItem(key, 1) : storage.removeItem(key)).catch(options.logError)
    markerWrites.add(write)
    await write
    markerWrites.delete(write)
  }

  async function attempt(doc: SessionDoc, delivery: Delivery): Promise<AttemptOutcome & { url: string }> {
    const destination = delivery.target === 'forward' ? options.forward : doc.webhook.endpoint
    const body = delivery.body ?? (delivery.event ? stringifyEvent(delivery.event) : undefined)
    if (!destination || body === undefined) return { statusCode: null, error: 'no target configured', durationMs: 0, url: delivery.url }
    const { url } = destination
    const secret = 'secret' in destination ? destination.secret : ''
    // Signed when the connection is up: the timestamp is the moment of sending.
    const sign = () => signWebhook({ secret, body, eventId: delivery.event_id, eventType: delivery.event_type }).headers
    const outcome = await sendWebhook(url, body, sign, sendOptionsFor(delivery.target))
    return { ...outcome, url }
  }

  async function work(slot: string): Promise<void> {
    const principal = principalOfSlot(slot)
    // The worker takes the session's parked heads back first, with the attempts they hold.
    if (parked.isParked(slot)) {
      await mutex.run(slot, async () => {
        const patch = parked.release(slot)
        if (patch) sessions.patch(principal, patch)
      })
    }
    while (!closed) {
      const doc = await sessions.load(principal)
      const now = Date.now()
      const { dueRun, heads } = findWork(doc)
      if (dueRun) {
        await spill.restore(principal, dueRun.batch)
        continue
      }
      if (heads.length === 0) {
        await markActive(slot, hasUndelivered(doc.webhook))
        return
      }
      await markActive(slot, true)
      const due = heads.filter((delivery) => Date.parse(delivery.next_attempt_at ?? '') <= now)
      if (due.length === 0) {
        sleepUntilDue(slot, doc, heads, now)
        return
      }
      const outcomes = await Promise.all(due.map(async (delivery) => ({ delivery, outcome: await attempt(doc, delivery) })))
      const finished = Date.now()
      for (const { outcome } of outcomes) recent.note(outcome.url, outcome, finished)
      const updated = await mutex.run(slot, async () => {
        const current = await sessions.load(principal)
        // Deliveries gone from the session meanwhile (`sandbox keys reset` deleted it): nothing
        // to record, and writing would bring the deleted session back.
        if (!outcomes.some(({ delivery }) => current.webhook.deliveries.some((item) => item.id === delivery.id))) return current.webhook
        let webhook = current.webhook
        for (const { delivery, outcome } of outcomes) {
          webhook = recordAttempt(webhook, delivery.id, outcome, options.retryScheduleMs, finished)
        }
        // Failed attempts that will be retried are written within FLUSH_DELAY_MS (or by the next
        // save of the session) instead of one write each: a dead receiver then costs the API
        // almost no storage work. A crash loses at most those records, and the attempts rerun.
        const retryLater = outcomes.every(({ delivery }) => webhook.deliveries.find((item) => item.id === delivery.id)?.status === 'retrying')
        if (retryLater) staged.stage(principal, { ...current, webhook })
        else await sessions.save(principal, { ...current, webhook }, finished)
        return webhook
      })
      for (const { delivery, outcome } of outcomes) {
        const after = updated.deliveries.find((item) => item.id === delivery.id)
        const attempt = after?.attempts ?? delivery.attempts + 1
        options.onDelivery?.(reportAttempt(delivery, { ...outcome, status: after?.status ?? 'failed', attempt }, new Date(finished).toISOString()))
      }
    }
  }

  /** Resumes every session that had deliveries to send when the server last stopped. */
  async function resume(): Promise<void> {
    if (options.persistent) await spill.removeOrphans()
    const markers = await storage.getKeys(ACTIVE_PREFIX)
    for (const marker of markers) {
      const slot = marker.slice(ACTIVE_PREFIX.length + 1)
      active.add(slot)
      kick(principalOfSlot(slot))
    }
  }

  /**
   * Writes the attempts parked heads hold into their sessions' documents (as patches, which the
   * next write of each takes along), and keeps them parked.
   */
  async function checkpointParked(): Promise<void> {
    await Promise.all(parked.slots().map((slot) => mutex.run(slot, async () => {
      const patch = parked.checkpoint(slot)
      if (patch) sessions.patch(principalOfSlot(slot), patch)
    })))
  }

  /** Writes failed attempts held in memory now rather than later. */
  async function flush(): Promise<void> {
    await checkpointParked()
    await staged.flush()
  }

  /** Stops scheduling; waits for attempts in flight to be recorded and written. */
  async function close(): Promise<void> {
    closed = true
    parked.stop()
    for (const timer of timers.values()) clearTimeout(timer)
    timers.clear()
    await Promise.all(running.values())
    if (options.persistent) await checkpointParked()
    await staged.close()
    await Promise.all(markerWrites)
    pool.close()
  }

  return { prepareCommit, prepareWrite, committed, kick, resume, close, flush, overlay: parked.overlay, idle: () => Promise.all(running.values()).then(() => undefined) }
}

/** A dispatcher made by createDispatcher. */
export type Dispatcher = ReturnType<typeof createDispatcher>
