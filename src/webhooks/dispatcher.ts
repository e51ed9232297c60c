import type { SandboxStorage } from '../storage/sandbox-storage.js'
import type { Principal } from '../server/auth.js'
import type { KeyedMutexLike } from '../server/services.js'
import type { SessionStore } from '../server/session-store.js'
import { principalOfSlot, sessionSlotOf } from '../server/session-doc.js'
import { createCommitDeliveries, type PreparedWrite } from './commit-deliveries.js'
import { createActiveMarkers } from './active-markers.js'
import { createCommitMarkers } from './commit-markers.js'
import { needsDispatch } from './waiting-deliveries.js'
import { createDeliveryAttempts, type AttemptOptions } from './delivery-attempts.js'
import type { DeliveryReport } from './delivery-report.js'
import { createParkedHeads } from './parked-heads.js'
import { createRecentRefusals } from './recent-refusals.js'
import { createStagedWrites } from './staged-writes.js'
import { findWork } from './find-work.js'
import { createAttemptRecorder } from './record-attempts.js'
import { createSessionRun } from './session-run.js'
import { createUnwrittenAttempts } from './unwritten-attempts.js'
import { createSlotWorkers } from './slot-workers.js'
import { createLiveEndpoints } from './live-endpoints.js'
import { createSpillUpkeep } from './spill-upkeep.js'
import { KEYS_WOKEN_PER_DESTINATION } from './destination-gates.js'
import { createWakePacer } from './wake-pacer.js'
import type { WebhookState } from './types.js'

/** How long failed attempts are kept in memory before they are written (see record-attempts.ts). */
const FLUSH_DELAY_MS = 1000
/**
 * The pacer's lane for sessions resumed at a start (no destination key looks like it): all kicked
 * at once, every waiting key's document was read together (fs: a descriptor each, so with 20,000
 * keys, or 256 on macOS's default limit, `serve` ran out and could not even listen), and the API's
 * first answers waited behind them.
 */
const RESUME_LANE = 'resume'
/** When a worker fails (storage trouble), how long until it tries again. */
const WORKER_RETRY_MS = 2000


/** Options of the dispatcher. */
export interface DispatcherOptions extends AttemptOptions {
  storage: SandboxStorage
  sessions: SessionStore
  mutex: KeyedMutexLike
  retryScheduleMs: readonly number[]
  /** Whether the storage outlives the process; without it there is no restart to resume deliveries after. */
  persistent: boolean
  onDelivery?: (report: DeliveryReport) => void
  logError: (error: unknown) => void
}

/**
 * Delivers the events each session's commits queue: one worker per session, attempts in event
 * order per target, retries on the schedule, progress written back through the session's mutex.
 * It runs beside the API, never inside a request, so slow or dead receivers cost requests nothing.
 */
export function createDispatcher(options: DispatcherOptions) {
  const { sessions, mutex } = options
  /** The endpoint of each working session as commits leave it, for the sends it is about to make. */
  const live = createLiveEndpoints()
  const workers = createSlotWorkers({ work: (slot) => live.watch(slot, () => runSession(slot)), retryMs: WORKER_RETRY_MS, logError: options.logError })
  /** Sessions known to have deliveries waiting; each also has a marker key in storage. */
  const markers = createActiveMarkers(options)
  const commitMarkers = createCommitMarkers({ markers, sessions, mutex, wakeLater: workers.wakeLater, retryMs: WORKER_RETRY_MS })
  const recent = createRecentRefusals()
  const attempts = createDeliveryAttempts(options, recent)
  const { prepareCommit, prepareWrite } = createCommitDeliveries({ ...options, recent })
  /**
   * Sessions woken because their receiver is back, a few per destination at a time (wake-pacer.ts),
   * and those resumed at a start, as many at a time in a lane of their own (RESUME_LANE).
   */
  const pacer = createWakePacer({ limit: KEYS_WOKEN_PER_DESTINATION, kick: workers.kick, settled: workers.settled })
  /** Heads of sleeping workers, retried by URL (parked-heads.ts); a worker that runs takes its own back first. */
  const parked = createParkedHeads({
    retryScheduleMs: options.retryScheduleMs,
    probe: attempts.probe,
    wake: (slot, url, target) => pacer.wake(attempts.destinationOf(url, target), slot),
    onAttempt: options.onDelivery,
    logError: options.logError,
  })
  /** Failed attempts to retry are recorded in memory and written a moment later (see record-attempts.ts). */
  const staged = createStagedWrites({ sessions, mutex, delayMs: FLUSH_DELAY_MS, flushOnClose: options.persistent, logError: options.logError })
  const record = createAttemptRecorder({ sessions, mutex, staged, retryScheduleMs: options.retryScheduleMs })
  const unwritten = createUnwrittenAttempts({ sessions, mutex, retryScheduleMs: options.retryScheduleMs })
  const spill = createSpillUpkeep({ sessions, mutex, logError: options.logError })
  let closed = false
  const runSession = createSessionRun({
    sessions, mutex, forwardUrl: options.forward?.url, live, parked, unwritten, spill, markers, commitMarkers,
    attempts, recent, record, wakeLater: workers.wakeLater, nextKick: workers.nextKick, onDelivery: options.onDelivery, isClosed: () => closed,
  })

  /**
   * After a commit's write (`before` is the webhook state it started from), under the session's
   * mutex: reports the attempts recent refusals stood for and parks their heads, and wakes the
   * session's worker if the commit gave it something to do now. When every head is parked, the
   * worker is not started at all.
   */
  function committed(principal: Principal, before: WebhookState, written: PreparedWrite): void {
    const slot = sessionSlotOf(principal)
    live.committed(slot, written.doc.webhook.endpoint)
    if (closed) return
    // A worker that runs sends the new heads itself, for real, and records that attempt: parked
    // with a refusal held as well, `serve` printed an attempt the delivery log never showed.
    const running = workers.isRunning(slot)
    if (!running) {
      for (const report of written.reports) options.onDelivery?.(report)
      if (written.parked.length > 0) parked.park(written.parked)
    }
    if (!needsDispatch(before, written.doc.webhook)) return
    if (!running && written.parked.length > 0) {
      const { dueRun, heads } = findWork(written.doc, options.forward !== undefined)
      if (!dueRun && heads.every((delivery) => parked.holds(slot, delivery.id))) {
        void markers.mark(slot, true)
        return
      }
    }
    workers.kick(slot)
  }

  /** Resumes every session that had deliveries to send when the server last stopped, a few at a time. */
  async function resume(): Promise<void> {
    if (options.persistent) await spill.removeOrphans()
    for (const slot of await markers.load()) pacer.wake(RESUME_LANE, slot)
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
    pacer.stop()
    // Sends queued behind the ones in flight to a slow receiver would each add a delivery timeout.
    attempts.stopQueued()
    await workers.stop()
    if (options.persistent) await checkpointParked()
    // What storage refused is reported once the rest is closed too.
    const unwrittenRecords = await staged.close().then(() => undefined, (error: Error) => error)
    await markers.settle()
    attempts.close()
    if (unwrittenRecords) throw unwrittenRecords
  }

  /** Starts (or re-runs) the delivery worker of a session. */
  const kick = (principal: Pick<Principal, 'keyId' | 'sessionId'>): void => workers.kick(sessionSlotOf(principal))

  /** Resolves once no worker runs, including those the pacer has yet to wake. */
  async function idle(): Promise<void> {
    await workers.idle()
    while (pacer.busy) {
      await new Promise((resolve) => setImmediate(resolve))
      await workers.idle()
    }
  }

  const { markBeforeWrite, recheckAfterFailedWrite } = commitMarkers
  return { prepareCommit, prepareWrite, markBeforeWrite, committed, recheckAfterFailedWrite, kick, resume, close, flush, overlay: parked.overlay, idle }
}

/** A dispatcher made by createDispatcher. */
export type Dispatcher = ReturnType<typeof createDispatcher>
