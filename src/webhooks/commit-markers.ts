import type { Principal } from '../server/auth.js'
import type { KeyedMutexLike } from '../server/services.js'
import type { SessionStore } from '../server/session-store.js'
import { sessionSlotOf } from '../server/session-doc.js'
import type { createActiveMarkers } from './active-markers.js'
import { hasUndelivered, needsDispatch } from './waiting-deliveries.js'
import type { WebhookState } from './types.js'

/**
 * Keeps a session's marker (active-markers.ts) and worker in step with the writes of its document,
 * so that deliveries a write stored are found whatever became of that write as far as this server
 * knows. A write that failed may still have been carried out (a redis that answered after the
 * command timeout): nothing told the worker of it, the next commit of the key only appended
 * behind it (no wake-up), and a key whose earlier events were all delivered had no marker for a
 * restart to find, so its deliveries waited for good.
 */
export function createCommitMarkers(options: {
  markers: ReturnType<typeof createActiveMarkers>
  sessions: SessionStore
  mutex: KeyedMutexLike
  /** Runs the session's worker after `delayMs`. */
  wakeLater: (slot: string, delayMs: number) => void
  /** How long after a failed write the worker looks at the session again. */
  retryMs: number
}) {
  const { markers, sessions, mutex } = options

  /**
   * Call right before a commit's write (under the session's mutex), and await it along with the
   * write: marks the session when the document about to be written has deliveries waiting. The
   * marker's write is started first, and storage carries out one client's writes in order (redis
   * on its connection, fs in its journal), so a document that holds deliveries is never stored
   * without its marker, whatever the answer to its write was or whenever the server stopped.
   */
  function markBeforeWrite(principal: Principal, before: WebhookState, after: WebhookState): Promise<void> {
    if (before === after || !hasUndelivered(after)) return Promise.resolve()
    return markers.mark(sessionSlotOf(principal), true)
  }

  /**
   * Call when a commit's write failed: its outcome is unknown, so the worker reads the document
   * again once storage answers (a run that fails to read retries by itself), and sends what the
   * write stored if it was carried out after all.
   */
  function recheckAfterFailedWrite(principal: Principal, before: WebhookState, after: WebhookState): void {
    if (needsDispatch(before, after)) options.wakeLater(sessionSlotOf(principal), options.retryMs)
  }

  /**
   * Marks or unmarks a session its worker found nothing to send in now, from its document read
   * again under the mutex: a commit between the worker's read and an unmark had marked it for
   * deliveries the worker did not see, and the unmark would have taken that marker away. The marker's write
   * is awaited outside the mutex, so requests of the key do not wait for it.
   */
  async function refreshMarker(slot: string, principal: Principal): Promise<void> {
    const { marking } = await mutex.run(slot, async () => {
      const doc = await sessions.load(principal)
      return { marking: markers.mark(slot, hasUndelivered(doc.webhook)) }
    })
    await marking
  }

  return { markBeforeWrite, recheckAfterFailedWrite, refreshMarker }
}
