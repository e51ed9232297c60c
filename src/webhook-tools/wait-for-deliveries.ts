import { setTimeout as sleep } from 'node:timers/promises'
import type { WebhookAnswer } from '../client/sandbox-client.js'

/** One entry of the delivery log (GET /api/sandbox/webhooks). */
export type DeliveryEntry = WebhookAnswer['deliveries'][number]

const isSettled = (delivery: DeliveryEntry) => delivery.status === 'delivered' || delivery.status === 'failed'

/**
 * Reads the log with `read` until every delivery it gives is delivered or has failed for good,
 * or `waitMs` passes, or one's next retry is due after that (it cannot be delivered in time).
 * Polls at 50 ms, doubling to 1 s: at most half the key's 120 requests a minute, and the client
 * waits out a 429.
 */
export async function waitForDeliveries(read: () => Promise<DeliveryEntry[]>, first: DeliveryEntry[], waitMs: number): Promise<{ deliveries: DeliveryEntry[]; waited_ms: number }> {
  const started = Date.now()
  const deadline = started + waitMs
  const hopeless = (delivery: DeliveryEntry) => delivery.status === 'retrying' && delivery.next_attempt_at !== null && Date.parse(delivery.next_attempt_at) > deadline
  let deliveries = first
  for (let pause = 50; !deliveries.every(isSettled) && !deliveries.some(hopeless) && Date.now() < deadline; pause = Math.min(pause * 2, 1000)) {
    await sleep(Math.min(pause, Math.max(0, deadline - Date.now())))
    deliveries = await read()
  }
  return { deliveries, waited_ms: Date.now() - started }
}

/** Where a delivery goes: its target and URL (`forward http://...`); empty when the log shows neither, as a hosted server's may. */
export function describeReceiver(delivery: DeliveryEntry): string {
  return [delivery.target, delivery.url].filter(Boolean).join(' ')
}

/**
 * Why some of `deliveries` were not delivered after a wait, naming the first by its delivery id
 * (what `webhook retry` takes; an event id is shared by its endpoint and forward deliveries) and
 * its receiver, and what to do next; null when all were.
 */
export function explainUndelivered(deliveries: DeliveryEntry[], waitedMs: number): string | null {
  const left = deliveries.filter((delivery) => delivery.status !== 'delivered')
  if (left.length === 0) return null
  const first = left[0]!
  const last = first.last_status_code ?? first.last_error
  const to = describeReceiver(first)
  const next = first.status === 'failed' ? `once the receiver answers 2xx, sandbox webhook retry ${first.id} sends it again` : `sandbox webhook deliveries shows how it ends`
  return `${left.length} of ${deliveries.length} not delivered after ${(waitedMs / 1000).toFixed(1)} s: the first, ${first.id} (${first.event_type}${to ? ` to ${to}` : ''}), is ${first.status}${last === null ? '' : ` (last answer: ${last})`}; ${next}`
}
