import type { z } from 'zod'
import type { deliveryViewSchema } from '../schemas/responses/webhook-views.js'
import type { SandboxEvent } from '../domain/types.js'
import { maskUrlPassword } from '../text/url-password.js'
import type { AttemptOutcome, Delivery, DeliveryTarget, StoredEndpoint, WebhookState } from './types.js'

/** A delivery log entry as the API shows it (inferred from its response schema). */
export type DeliveryView = z.infer<typeof deliveryViewSchema>

/**
 * Delivered and failed entries kept in the log, the newest of each; waiting ones are always kept.
 * Failed ones keep their event for the retry endpoint: kept without end, with a short schedule and
 * a dead receiver they piled up in the document each request rewrites (one key, 2,000 events:
 * 18.3 ms per request on fs instead of 8.8 ms, measured).
 */
export const FINISHED_KEPT = 200

/** The default schedule: delays after the first try (decisions.md: 5 s, 30 s, 2 min, 10 min). */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000]

/** Parses `5s,30s,2m,10m` (units ms, s, m, h) into delays in milliseconds. */
export function parseRetrySchedule(text: string): number[] {
  const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }
  const delays = text.split(',').map((part) => {
    const match = /^\s*(\d+)(ms|s|m|h)\s*$/.exec(part)
    if (!match) throw new Error(`invalid retry schedule "${text}": expected delays such as 5s,30s,2m,10m`)
    return Number(match[1]) * units[match[2]!]!
  })
  if (delays.length === 0 || delays.length > 20) throw new Error(`invalid retry schedule "${text}": give 1 to 20 delays`)
  return delays
}

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
export function enqueueEvents(state: WebhookState, events: SandboxEvent[], targets: TargetInfo[], now: string, newId: (prefix: string) => string): WebhookState {
  const added: Delivery[] = []
  let seq = state.next_seq ?? 0
  for (const event of events) {
    for (const target of targets) {
      if (target.events && !target.events.includes(event.type) && event.type !== 'sandbox.webhook.test') continue
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
      last_error: ok ? null : outcome.error ?? `receiver answered ${outcome.statusCode}`,
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
 * The wait after a delivery's attempt number `attempts` fails, counted from where the retry
 * endpoint last restarted its schedule; undefined when that was the last attempt.
 */
export function findRetryDelay(scheduleMs: readonly number[], attempts: number, scheduleBase = 0): number | undefined {
  return scheduleMs[attempts - 1 - scheduleBase]
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

/**
 * Whether an attempt due at `next` (ms) is due at `now`, for a delivery last changed at
 * `changedAt`. A clock that reads earlier than that change was set back (NTP, a resumed VM):
 * waiting for `next` would add the whole step back to the wait, an hour for a clock set back an
 * hour, so the attempt is due at once instead. Any other step back costs less than one schedule
 * step.
 */
export function isDueAt(next: number, changedAt: number, now: number): boolean {
  return next <= now || changedAt > now
}

/** Whether a waiting delivery's next attempt is due at `now` (see {@link isDueAt}). */
export function isDue(delivery: Delivery, now: number): boolean {
  return isDueAt(Date.parse(delivery.next_attempt_at ?? ''), Date.parse(delivery.updated_at), now)
}

/** Whether a delivery is still to be sent (pending, or retrying on the schedule). */
export function isWaiting(delivery: Delivery): boolean {
  return delivery.status === 'pending' || delivery.status === 'retrying'
}

/** Whether any delivery still waits to be sent, in the document or spilled out of it. */
export function hasUndelivered(state: WebhookState): boolean {
  return (state.spilled?.length ?? 0) > 0 || state.deliveries.some(isWaiting)
}

/**
 * Whether a change of webhook state gives the dispatcher something to do now. Deliveries only
 * appended behind ones still waiting for the same target do not: they go out after those, which
 * the dispatcher is already sending or has a timer for.
 */
export function needsDispatch(before: WebhookState, after: WebhookState): boolean {
  if (before === after || !hasUndelivered(after)) return false
  if (before.endpoint !== after.endpoint || after.deliveries.length < before.deliveries.length) return true
  const waiting = new Set<DeliveryTarget>()
  for (let i = 0; i < before.deliveries.length; i++) {
    const delivery = before.deliveries[i]!
    if (after.deliveries[i] !== delivery) return true
    if (isWaiting(delivery)) waiting.add(delivery.target)
  }
  return after.deliveries.slice(before.deliveries.length).some((delivery) => !waiting.has(delivery.target))
}

/** The delivery log as the API shows it: most recent 50, newest first, without bodies. */
export function viewDeliveries(state: WebhookState): DeliveryView[] {
  return state.deliveries.slice(-50).reverse().map(showDelivery)
}

/** A delivery as the API shows it: without its body, queue position and schedule start. */
export function showDelivery({ event: _event, body: _body, seq: _seq, schedule_base: _base, ...delivery }: Delivery): DeliveryView {
  // A forward URL's password is the server operator's, not the key holders'.
  return delivery.url.includes('@') ? { ...delivery, url: maskUrlPassword(delivery.url) } : delivery
}
