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
    status_code: result.statusCode,
    error: result.error,
    duration_ms: result.durationMs,
    at,
    request_id: delivery.request_id ?? null,
  }
}

/** The report of an attempt that could not connect, after which the delivery is retried. */
export function reportRefusedAttempt(delivery: Pick<Delivery, 'id' | 'event_id' | 'event_type' | 'target' | 'url' | 'request_id'>, attempt: number, error: string | null, durationMs: number, at: string): DeliveryReport {
  return reportAttempt(delivery, { url: delivery.url, status: 'retrying', attempt, statusCode: null, error, durationMs }, at)
}

/** The reports of a worker run's attempts (finished at `finished`), each with its delivery as `webhook`, the state recorded, has it. */
export function reportRun(outcomes: TriedDelivery[], webhook: WebhookState, finished: number): DeliveryReport[] {
  return outcomes.map(({ delivery, outcome }) => {
    const after = webhook.deliveries.find((item) => item.id === delivery.id)
    const attempt = after?.attempts ?? delivery.attempts + 1
    // A non-2xx answer has no error of its own: the line says why, as the log's last_error does.
    return reportAttempt(delivery, { ...outcome, error: describeAttemptError(outcome), status: after?.status ?? 'failed', attempt }, new Date(finished).toISOString())
  })
}
