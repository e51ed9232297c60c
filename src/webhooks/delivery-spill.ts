import { isWaiting } from './waiting-deliveries.js'
import type { Delivery, DeliveryTarget, SpilledRun, WebhookState } from './types.js'

// While a receiver is down, every event of the key queues a delivery behind the one being retried
// (deliveries go out in event order), each with its event. Kept in the session document, that
// backlog was rewritten by every request of the key: one key with a dead receiver and 2,000 events
// took twice as long per request on fs (measured), growing without end. The backlog's middle is
// moved into batches of its own instead, written once, and brought back when its turn comes.

/** Waiting deliveries of a target kept at the front of its queue: the ones being attempted next. */
export const KEEP_OLDEST = 64
/** ... and at its end: the newest, which the API's delivery log shows (50) and commits append to. */
export const KEEP_NEWEST = 50
/** Deliveries moved out at a time, at least. */
export const SPILL_MIN = 64

/** A batch of deliveries to write before the document that no longer holds them. */
export interface SpilledBatch {
  batch: number
  deliveries: Delivery[]
}

function lastSpilledSeq(state: WebhookState, target: DeliveryTarget): number {
  let last = -1
  for (const run of state.spilled ?? []) if (run.target === target) last = Math.max(last, run.last_seq)
  return last
}

/**
 * Moves the middle of long backlogs out of the document: for each target, the waiting deliveries
 * after its KEEP_OLDEST first and before its KEEP_NEWEST last, once there are SPILL_MIN of them,
 * and only ones newer than what was moved before (so the runs stay in queue order). The batches
 * must be written before the state is.
 */
export function spillDeliveries(state: WebhookState): { state: WebhookState; batches: SpilledBatch[] } {
  // Every save asks: most documents hold far fewer deliveries than a spill needs.
  if (state.deliveries.length < KEEP_OLDEST + KEEP_NEWEST + SPILL_MIN) return { state, batches: [] }
  const waiting = new Map<DeliveryTarget, Delivery[]>()
  for (const delivery of state.deliveries) {
    if (!isWaiting(delivery)) continue
    const list = waiting.get(delivery.target)
    if (list) list.push(delivery)
    else waiting.set(delivery.target, [delivery])
  }
  let next = state
  const batches: SpilledBatch[] = []
  for (const [target, list] of waiting) {
    if (list.length < KEEP_OLDEST + KEEP_NEWEST + SPILL_MIN) continue
    const after = lastSpilledSeq(next, target)
    const moved = list.slice(KEEP_OLDEST, list.length - KEEP_NEWEST).filter((delivery) => delivery.seq !== undefined && delivery.seq > after)
    if (moved.length < SPILL_MIN) continue
    const batch = next.next_spill ?? 1
    const run: SpilledRun = { batch, target, first_seq: moved[0]!.seq!, last_seq: moved.at(-1)!.seq!, count: moved.length }
    const gone = new Set(moved)
    next = { ...next, deliveries: next.deliveries.filter((delivery) => !gone.has(delivery)), spilled: [...(next.spilled ?? []), run], next_spill: batch + 1 }
    batches.push({ batch, deliveries: moved })
  }
  return { state: next, batches }
}

/**
 * The spilled run whose turn has come for `target`: its first delivery is older than every waiting
 * delivery of the target left in the document.
 */
export function findDueRun(state: WebhookState, target: DeliveryTarget): SpilledRun | undefined {
  const run = state.spilled?.find((item) => item.target === target)
  if (!run) return undefined
  const head = state.deliveries.find((delivery) => delivery.target === target && isWaiting(delivery))
  // Deliveries of an earlier version (no seq) are older than any run.
  if (head && (head.seq === undefined || head.seq < run.first_seq)) return undefined
  return run
}

/**
 * Puts a run's deliveries back into the document, in queue order, and forgets the run. Merged by
 * `seq` rather than put before the first newer delivery: a failed one the retry endpoint put back
 * after the run was moved out has its place among them.
 */
export function restoreRun(state: WebhookState, run: SpilledRun, deliveries: Delivery[]): WebhookState {
  const merged: Delivery[] = []
  let next = 0
  for (const delivery of state.deliveries) {
    if (delivery.target === run.target && delivery.seq !== undefined) {
      while (next < deliveries.length && deliveries[next]!.seq! < delivery.seq) merged.push(deliveries[next++]!)
    }
    merged.push(delivery)
  }
  merged.push(...deliveries.slice(next))
  return { ...state, deliveries: merged, spilled: (state.spilled ?? []).filter((item) => item.batch !== run.batch) }
}
