import type { Principal } from '../server/auth.js'
import type { KeyedMutexLike } from '../server/services.js'
import type { SessionStore } from '../server/session-store.js'
import { recordAttempt } from './deliveries.js'
import type { TriedDelivery } from './record-attempts.js'
import type { WebhookState } from './types.js'
import { isWaiting } from './waiting-deliveries.js'

/**
 * `webhook` with the attempts of `outcomes` recorded, each only if its delivery has at most the
 * attempt count it was sent with: one already recorded (by a write that failed, yet was carried
 * out) is not counted twice. Fewer is the record of earlier failed attempts lost with the failed
 * write (staged, never written): this one is recorded all the same, or a success would be sent again.
 */
function applyUnrecorded(webhook: WebhookState, outcomes: TriedDelivery[], scheduleMs: readonly number[], finished: number): WebhookState {
  let state = webhook
  for (const { delivery, outcome } of outcomes) {
    const current = state.deliveries.find((item) => item.id === delivery.id)
    if (current && isWaiting(current) && current.attempts <= delivery.attempts) state = recordAttempt(state, delivery.id, outcome, scheduleMs, finished)
  }
  return state
}

/**
 * Attempts the receiver got whose record could not be written (storage failing: a full disk, a
 * redis gone). Dropped, the worker's next run read the document as stored, found the delivery
 * still pending with no attempt, and sent it again, every run, the receiver accepting each. They
 * are kept instead as a patch of the session in memory (session-store.ts), which every read of it
 * applies and its next write takes along, and the worker writes them before it sends anything more.
 */
export function createUnwrittenAttempts(options: { sessions: SessionStore; mutex: KeyedMutexLike; retryScheduleMs: readonly number[] }) {
  const { sessions, mutex } = options
  /** Sessions holding attempts not yet written. */
  const slots = new Set<string>()

  /**
   * Keeps the record of `outcomes` (finished at `finished`) in memory for `principal`'s session,
   * and resolves with what it makes of `webhook`, the state the attempts were made from.
   */
  async function hold(slot: string, principal: Principal, outcomes: TriedDelivery[], finished: number, webhook: WebhookState): Promise<WebhookState> {
    const scheduleMs = options.retryScheduleMs
    await mutex.run(slot, async () => {
      sessions.patch(principal, (doc) => ({ ...doc, webhook: applyUnrecorded(doc.webhook, outcomes, scheduleMs, finished) }))
    })
    slots.add(slot)
    return applyUnrecorded(webhook, outcomes, scheduleMs, finished)
  }

  /** Writes the attempts held for `slot`, if any; rejects while storage still fails (they stay held). */
  async function write(slot: string, principal: Principal): Promise<void> {
    if (!slots.has(slot)) return
    await mutex.run(slot, () => sessions.flushStaged(principal))
    slots.delete(slot)
  }

  return { hold, write }
}
