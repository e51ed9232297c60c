import type { z } from 'zod'
import type { deliveryViewSchema } from '../schemas/responses/webhook-views.js'
import { maskUrlPassword } from '../text/url-password.js'
import type { Delivery, WebhookState } from './types.js'
import { isWaiting } from './waiting-deliveries.js'

/** A delivery log entry as the API shows it (inferred from its response schema). */
export type DeliveryView = z.infer<typeof deliveryViewSchema>

/**
 * The delivery log as the API shows it: most recent 50, newest first, without bodies. `forwardUrl`
 * is serve's --webhook-forward-to now, if any.
 */
export function viewDeliveries(state: WebhookState, forwardUrl?: string): DeliveryView[] {
  return withQueuedTimes(state.deliveries).slice(-50).reverse().map((delivery) => showDelivery(withNextUrl(delivery, state, forwardUrl)))
}

/**
 * A waiting delivery queued behind earlier ones of its target goes out only after them (event
 * order), so the time it holds (when it was queued or put back by the retry endpoint, or a retry
 * time from before an earlier one was put back ahead of it) goes by while nothing happens. The log
 * shows instead the earliest moment it can really be tried: the latest next attempt of the ones
 * ahead of it, or its own if later. DELIVERIES are oldest first, as the state keeps them.
 */
function withQueuedTimes(deliveries: readonly Delivery[]): Delivery[] {
  const ahead = new Map<Delivery['target'], { at: number; text: string }>()
  return deliveries.map((delivery) => {
    if (!isWaiting(delivery) || delivery.next_attempt_at === null) return delivery
    const own = { at: Date.parse(delivery.next_attempt_at), text: delivery.next_attempt_at }
    const before = ahead.get(delivery.target)
    if (before === undefined || own.at >= before.at) {
      ahead.set(delivery.target, own)
      return delivery
    }
    return { ...delivery, next_attempt_at: before.text }
  })
}

/**
 * A waiting delivery goes to the URL its target has when it is sent, not the one it was queued
 * for: after POST /webhooks moved the endpoint, or serve started with another --webhook-forward-to,
 * the log shows where it will go. Without a forward target, forward ones keep theirs: they wait.
 */
function withNextUrl(delivery: Delivery, state: WebhookState, forwardUrl: string | undefined): Delivery {
  const url = delivery.target === 'endpoint' ? state.endpoint?.url : forwardUrl
  return url !== undefined && isWaiting(delivery) ? { ...delivery, url } : delivery
}

/** A delivery as the API shows it: without its body, queue position and schedule start. */
export function showDelivery({ event: _event, body: _body, seq: _seq, schedule_base: _base, request_id, ...delivery }: Delivery): DeliveryView {
  // A forward URL's password is the server operator's, not the key holders'.
  const url = delivery.url.includes('@') ? maskUrlPassword(delivery.url) : delivery.url
  return { ...delivery, url, request_id: request_id ?? null }
}
