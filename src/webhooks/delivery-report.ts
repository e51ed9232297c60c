import type { Delivery, DeliveryTarget } from './types.js'

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
}

/** The report of an attempt that could not connect, after which the delivery is retried. */
export function reportRefusedAttempt(delivery: Pick<Delivery, 'id' | 'event_id' | 'event_type' | 'target' | 'url'>, attempt: number, error: string | null, durationMs: number, at: string): DeliveryReport {
  return {
    delivery_id: delivery.id,
    event_id: delivery.event_id,
    event_type: delivery.event_type,
    target: delivery.target,
    url: delivery.url,
    status: 'retrying',
    attempt,
    status_code: null,
    error,
    duration_ms: durationMs,
    at,
  }
}
