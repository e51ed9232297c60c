import { describeAttemptError } from './deliveries.js'
import type { TriedDelivery } from './record-attempts.js'
import type { Delivery, DeliveryTarget, WebhookState } from './types.js'

/** One finished attempt, as `serve` prints it. */
export interface DeliveryReport {
  delivery_id: string
  event_id: string
  event_type: string
  target: DeliveryTarget
  url: string
  status: Delivery['status']
  attempt: number
  /** While `retrying`, when the next attempt is due (the delivery log's `next_attempt_at`); else null. */
  next_attempt_at: string | null
  status_code: number | null
  error: string | null
  duration_ms: number
  at: string
  /** The request whose change queued the event (its answer's request_id); null for one queued by an earlier version. */
  request_id: string | null
}

/** What an attempt came to, for its report. */
export interface AttemptResult {
  url: string
  status: Delivery['status']
  attempt: number
  nextAttemptAt?: string | null
  statusCode: number | null
  error: string | null
  durationMs: number
}

/** The report of one attempt at `delivery` (or at a head remembered from it). */
export function reportAttempt(delivery: Pick<Delivery, 'id' | 'event_id' | 'event_type' | 'target' | 'request_id'>, result: AttemptResult, at: string): DeliveryReport {
  return {
    delivery_id: delivery.id,
    event_id: delivery.event_id,
    event_type: delivery.event_type,
    target: delivery.target,
    url: result.url,
    status: result.status,
    attempt: result.attempt,
    next_attempt_at: result.status === 'retrying' ? result.nextAttemptAt ?? null : null,
    status_code: result.statusCode,
    error: result.error,
    duration_ms: result.durationMs,
    at,
    request_id: delivery.request_id ?? null,
  }
}

/** The report of an attempt that could not connect, after which the delivery is retried at `next` (epoch ms). */
export function reportRefusedAttempt(delivery: Pick<Delivery, 'id' | 'event_id' | 'event_type' | 'target' | 'url' | 'request_id'>, attempt: number, error: string | null, durationMs: number, at: string, next: number): DeliveryReport {
  return reportAttempt(delivery, { url: delivery.url, status: 'retrying', attempt, nextAttemptAt: new Date(next).toISOString(), statusCode: null, error, durationMs }, at)
}

/** The reports of a worker run's attempts (finished at `finished`), each with its delivery as `webhook`, the state recorded, has it. */
export function reportRun(outcomes: TriedDelivery[], webhook: WebhookState, finished: number): DeliveryReport[] {
  return outcomes.map(({ delivery, outcome }) => {
    const after = webhook.deliveries.find((item) => item.id === delivery.id)
    const attempt = after?.attempts ?? delivery.attempts + 1
    // A non-2xx answer has no error of its own: the line says why, as the log's last_error does.
    return reportAttempt(delivery, { ...outcome, error: describeAttemptError(outcome), status: after?.status ?? 'failed', attempt, nextAttemptAt: after?.next_attempt_at ?? null }, new Date(finished).toISOString())
  })
}
