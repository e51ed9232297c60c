import type { SandboxEvent } from '../domain/types.js'
import { takesEvent } from '../domain/event-types.js'
import { findRetryDelay } from './retry-schedule.js'
import type { AttemptOutcome, Delivery, DeliveryTarget, StoredEndpoint, WebhookState } from './types.js'
import { isWaiting } from './waiting-deliveries.js'

/**
 * Delivered and failed entries kept in the log, the newest of each; waiting ones are always kept.
 * Failed ones keep their event for the retry endpoint: kept without end, with a short schedule and
 * a dead receiver they piled up in the document each request rewrites (one key, 2,000 events:
 * 18.3 ms per request on fs instead of 8.8 ms, measured).
 */
export const FINISHED_KEPT = 200

/** An empty webhook state for a new session. */
export function createWebhookState(): WebhookState {
  return { endpoint: null, deliveries: [] }
}

/** A delivery target resolved for a session: where to send and with which secret. */
export interface TargetInfo {
  target: DeliveryTarget
  url: string
  secret: string
  /** Event types it takes; undefined for all. */
  events?: readonly string[]
}

/** The targets a session's events go to now: its enabled endpoint, and the forward URL if set. */
export function listTargets(endpoint: StoredEndpoint | null, forward: { url: string; secret: string } | undefined): TargetInfo[] {
  const targets: TargetInfo[] = []
  if (endpoint?.enabled) targets.push({ target: 'endpoint', url: endpoint.url, secret: endpoint.secret, events: endpoint.events })
  if (forward) targets.push({ target: 'forward', url: forward.url, secret: forward.secret })
  return targets
}

/**
 * Turns events into pending deliveries, one per subscribed target, in event order. Events no
 * target takes are not delivered (an endpoint receives what happens while it is subscribed).
 */
export function enqueueEvents(state: WebhookState, events: SandboxEvent[], targets: TargetInfo[], now: string, newId: (prefix: string) => string, requestId?: string): WebhookState {
  const added: Delivery[] = []
  let seq = state.next_seq ?? 0
  for (const event of events) {
    for (const target of targets) {
      if (!takesEvent(target.events, event.type)) continue
      added.push({
        id: newId('whd'),
        event_id: event.id,
        event_type: event.type,
        target: target.target,
        url: target.url,
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        last_status_code: null,
        last_error: null,
        created_at: now,
        updated_at: now,
        ...(requestId === undefined ? {} : { request_id: requestId }),
        seq: seq++,
        // The body sent is stringifyEvent(event): the same bytes before and after a restart.
        event,
      })
    }
  }
  return added.length ? { ...state, deliveries: trimLog([...state.deliveries, ...added]), next_seq: seq } : state
}

function trimLog(deliveries: Delivery[]): Delivery[] {
  let delivered = 0
  let failed = 0
  for (const delivery of deliveries) {
    if (delivery.status === 'delivered') delivered++
    else if (delivery.status === 'failed') failed++
  }
  if (delivered <= FINISHED_KEPT && failed <= FINISHED_KEPT) return deliveries
  return deliveries.filter((delivery) => {
    if (delivery.status === 'delivered') return delivered-- <= FINISHED_KEPT
    if (delivery.status === 'failed') return failed-- <= FINISHED_KEPT
    return true
  })
}

/**
 * The next delivery a target should attempt: its oldest undelivered one, so deliveries go out in
 * event order (a retrying head holds back the ones after it).
 */
export function findHead(state: WebhookState, target: DeliveryTarget): Delivery | undefined {
  return state.deliveries.find((delivery) => delivery.target === target && isWaiting(delivery))
}

/** Whether an attempt delivered its event: a 2xx answer within the timeout. */
function isDelivered(outcome: AttemptOutcome): boolean {
  return outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300
}

/**
 * Why an attempt did not deliver: its error, or the status the receiver answered with (the text the
 * log's `last_error` and serve's --json-logs line both show); null for a delivered one.
 */
export function describeAttemptError(outcome: AttemptOutcome): string | null {
  if (isDelivered(outcome)) return null
  return outcome.error ?? `receiver answered ${outcome.statusCode}`
}

/**
 * Records an attempt: 2xx delivers; anything else retries on the schedule, then fails. `url` is
 * where the attempt went, when that differs from where the delivery was queued for.
 */
export function recordAttempt(state: WebhookState, deliveryId: string, outcome: AttemptOutcome & { url?: string }, scheduleMs: readonly number[], now: number): WebhookState {
  const deliveries = state.deliveries.map((delivery) => {
    if (delivery.id !== deliveryId) return delivery
    const attempts = delivery.attempts + 1
    const ok = isDelivered(outcome)
    const delay = findRetryDelay(scheduleMs, attempts, delivery.schedule_base)
    const status = ok ? 'delivered' : delay === undefined ? 'failed' : 'retrying'
    const next: Delivery = {
      ...delivery,
      url: outcome.url ?? delivery.url,
      attempts,
      status,
      next_attempt_at: status === 'retrying' ? new Date(now + delay!).toISOString() : null,
      last_status_code: outcome.statusCode,
      last_error: describeAttemptError(outcome),
      updated_at: new Date(now).toISOString(),
    }
    if (ok) {
      delete next.body
      delete next.event
    }
    return next
  })
  return { ...state, deliveries: trimLog(deliveries) }
}

/**
 * Puts deliveries back in the queue for an immediate attempt with a fresh schedule (the retry
 * endpoint); their attempt count goes on.
 */
export function requeueDeliveries(state: WebhookState, ids: readonly string[], now: string): WebhookState {
  const wanted = new Set(ids)
  return {
    ...state,
    deliveries: state.deliveries.map((delivery) => (wanted.has(delivery.id)
      ? { ...delivery, status: 'pending', schedule_base: delivery.attempts, next_attempt_at: now, updated_at: now }
      : delivery)),
  }
}
