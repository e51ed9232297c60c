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
 * to retry are staged, others saved now. The recorder resolves with the webhook state written.
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
    let webhook = current.webhook
    for (const { delivery, outcome } of outcomes) {
      webhook = recordAttempt(webhook, delivery.id, outcome, options.retryScheduleMs, finished)
    }
    // Failed attempts that will be retried are written within the dispatcher's FLUSH_DELAY_MS (or
    // by the next save of the session) instead of one write each: a dead receiver then costs the
    // API almost no storage work. A crash loses at most those records, and the attempts rerun.
    const retryLater = outcomes.every(({ delivery }) => webhook.deliveries.find((item) => item.id === delivery.id)?.status === 'retrying')
    if (retryLater) staged.stage(principal, { ...current, webhook })
    else await sessions.save(principal, { ...current, webhook }, finished)
    return webhook
  })
}
