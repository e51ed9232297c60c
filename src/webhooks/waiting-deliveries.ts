import type { Delivery, DeliveryTarget, WebhookState } from './types.js'

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
