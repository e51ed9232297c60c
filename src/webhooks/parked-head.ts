import { recordAttempt } from './deliveries.js'
import type { Delivery, DeliveryTarget, WebhookState } from './types.js'

/**
 * A queue head waiting for its next attempt, held outside the session document: its failed
 * attempts to connect are counted here and reach the document only when the session is next
 * worked on (see `release` in parked-heads.ts).
 */
export interface ParkedHead {
  slot: string
  id: string
  event_id: string
  event_type: Delivery['event_type']
  target: DeliveryTarget
  url: string
  request_id: string | undefined
  /** The delivery as the document held it when parked: held attempts apply to that version only. */
  baseAttempts: number
  baseUpdatedAt: string
  /** Where its schedule starts (Delivery.schedule_base). */
  scheduleBase: number
  /** Failed attempts made since it was parked, not in the document. */
  held: number
  lastError: string | null
  lastDurationMs: number
  lastAt: number
  /** When the next attempt is due (ms since epoch). */
  next: number
  released: boolean
}

/** A head parked as the document holds it, with no attempt held yet. */
export function toParkedHead(slot: string, delivery: Delivery, url: string): ParkedHead {
  return {
    slot,
    id: delivery.id,
    event_id: delivery.event_id,
    event_type: delivery.event_type,
    target: delivery.target,
    url,
    request_id: delivery.request_id,
    baseAttempts: delivery.attempts,
    baseUpdatedAt: delivery.updated_at,
    scheduleBase: delivery.schedule_base ?? 0,
    held: 0,
    lastError: null,
    lastDurationMs: 0,
    lastAt: 0,
    next: Date.parse(delivery.next_attempt_at ?? ''),
    released: false,
  }
}

/** Adds the attempts a parked head holds to its delivery, if the state still has that version of it. */
export function applyHeldAttempts(state: WebhookState, heads: readonly ParkedHead[], scheduleMs: readonly number[]): WebhookState {
  let next = state
  for (const head of heads) {
    if (head.held === 0) continue
    const delivery = next.deliveries.find((item) => item.id === head.id)
    // Put back by the retry endpoint (or otherwise changed) since: what was held no longer applies.
    if (!delivery || delivery.attempts !== head.baseAttempts || delivery.updated_at !== head.baseUpdatedAt || (delivery.schedule_base ?? 0) !== head.scheduleBase) continue
    const outcome = { statusCode: null, error: head.lastError, durationMs: head.lastDurationMs }
    for (let i = 0; i < head.held; i++) next = recordAttempt(next, head.id, outcome, scheduleMs, head.lastAt)
  }
  return next
}
