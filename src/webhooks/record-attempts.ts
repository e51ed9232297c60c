import type { Principal } from '../server/auth.js'
import type { KeyedMutexLike } from '../server/services.js'
import type { SessionStore } from '../server/session-store.js'
import { recordAttempt } from './deliveries.js'
import type { createStagedWrites } from './staged-writes.js'
import type { AttemptOutcome, Delivery, WebhookState } from './types.js'

/** One delivery a worker tried, with how the attempt went. */
export interface TriedDelivery {
  delivery: Delivery
  outcome: AttemptOutcome & { url: string }
}

/**
 * Records a worker's attempts in its session's document, under the session's mutex: failed ones
 * to retry are kept in memory (refused connections until the session's next write, others
 * staged), others saved now. The recorder resolves with the webhook state written.
 */
export function createAttemptRecorder(options: {
  sessions: SessionStore
  mutex: KeyedMutexLike
  staged: ReturnType<typeof createStagedWrites>
  retryScheduleMs: readonly number[]
}) {
  const { sessions, mutex, staged } = options
  return (slot: string, principal: Principal, outcomes: TriedDelivery[], finished: number): Promise<WebhookState> => mutex.run(slot, async () => {
    const current = await sessions.load(principal)
    // Deliveries gone from the session meanwhile (`sandbox keys reset` deleted it): nothing
    // to record, and writing would bring the deleted session back.
    if (!outcomes.some(({ delivery }) => current.webhook.deliveries.some((item) => item.id === delivery.id))) return current.webhook
    const webhook = recordOutcomes(current.webhook, outcomes, options.retryScheduleMs, finished)
    const retryLater = outcomes.every(({ delivery }) => webhook.deliveries.find((item) => item.id === delivery.id)?.status === 'retrying')
    if (!retryLater) {
      await sessions.save(principal, { ...current, webhook }, finished)
    } else if (outcomes.every(({ outcome }) => outcome.refused)) {
      // No connection was made: kept in memory until the session's next write (the delivery's last
      // attempt, whose failure is saved at once, a request, the receiver taking connections again)
      // or a clean stop, like the retries parked heads count. Staged, the first attempt of every
      // queued event cost a write of the whole document while a dead receiver's backlog drained.
      // The document held in memory is `current`; one read back from storage (evicted meanwhile)
      // holds the versions recorded on here, and gets the attempts again.
      const recorded = outcomes.flatMap(({ delivery, outcome }) => {
        const version = current.webhook.deliveries.find((item) => item.id === delivery.id)
        return version ? [{ delivery: { id: version.id }, attempts: version.attempts, updatedAt: version.updated_at, outcome }] : []
      })
      const again = (state: WebhookState) => recordOutcomes(state, recorded.filter((item) => isVersionOf(state, item)), options.retryScheduleMs, finished)
      sessions.patch(principal, (doc) => (doc === current ? { ...current, webhook } : { ...doc, webhook: again(doc.webhook) }))
    } else {
      // Failed attempts that will be retried are written within the dispatcher's FLUSH_DELAY_MS (or
      // by the next save of the session) instead of one write each: a dead receiver then costs the
      // API almost no storage work. A crash loses at most those records, and the attempts rerun.
      staged.stage(principal, { ...current, webhook })
    }
    return webhook
  })
}

/** The webhook state with each outcome recorded as an attempt of its delivery. */
function recordOutcomes(state: WebhookState, outcomes: ReadonlyArray<{ delivery: Pick<Delivery, 'id'>; outcome: TriedDelivery['outcome'] }>, scheduleMs: readonly number[], finished: number): WebhookState {
  let webhook = state
  for (const { delivery, outcome } of outcomes) webhook = recordAttempt(webhook, delivery.id, outcome, scheduleMs, finished)
  return webhook
}

/** Whether the state still holds the version of a delivery that was attempted. */
function isVersionOf(state: WebhookState, attempted: { delivery: Pick<Delivery, 'id'>; attempts: number; updatedAt: string }): boolean {
  const delivery = state.deliveries.find((item) => item.id === attempted.delivery.id)
  return delivery !== undefined && delivery.attempts === attempted.attempts && delivery.updated_at === attempted.updatedAt
}
