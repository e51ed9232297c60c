import type { Walk } from './walk-types.js'

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The delivery log of a GET /webhooks answer: at most 50, newest first, delivered ones stay delivered. */
export function checkDeliveryLog(walk: Walk, k: number, body: any): void {
  const { client } = walk
  const model = walk.models[k]!
  const deliveries: any[] = body?.deliveries ?? []
  if (deliveries.length > 50) client.fail(`k${k}: ${deliveries.length} deliveries shown`)
  const ids = deliveries.map((delivery) => delivery.id)
  if (new Set(ids).size !== ids.length) client.fail(`k${k}: a delivery is listed twice`)
  // The log is in queue order; a wall clock set back gives later deliveries earlier times.
  for (let i = 1; i < deliveries.length && !walk.clockMoved; i++) {
    if (deliveries[i - 1].created_at < deliveries[i].created_at) client.fail(`k${k}: deliveries not newest first at ${i}`)
  }
  for (const delivery of deliveries) {
    if (delivery.status === 'delivered' && !(delivery.last_status_code >= 200 && delivery.last_status_code < 300)) client.fail(`k${k}: delivery ${delivery.id} delivered with status ${delivery.last_status_code}`)
    if (model.delivered.has(delivery.id) && delivery.status !== 'delivered') client.fail(`k${k}: delivery ${delivery.id} was delivered, now ${delivery.status}`)
    if (delivery.status === 'delivered') model.delivered.add(delivery.id)
    if (!Number.isInteger(delivery.attempts) || delivery.attempts < 0) client.fail(`k${k}: delivery ${delivery.id} attempts ${delivery.attempts}`)
  }
}
