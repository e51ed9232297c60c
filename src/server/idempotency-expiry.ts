import type { KeyedMutexLike } from './services.js'
import { startRepeatingSweep, type RepeatingSweep } from './repeating-sweep.js'
import { principalOfSlot } from './session-doc.js'
import type { SessionStore } from './session-store.js'

/** How often every stored session is checked for idempotency records past their 24 hours. */
export const IDEMPOTENCY_SWEEP_MS = 60 * 60 * 1000

/** The first check after a start: soon, since a server restarted daily would otherwise never run one. */
export const FIRST_IDEMPOTENCY_SWEEP_MS = 60 * 1000

/** What a check of the stored sessions uses. */
export interface IdempotencyCheckOptions {
  sessions: Pick<SessionStore, 'listSlots' | 'expireIdempotency' | 'mayHoldExpired' | 'keepExpiryTimesOf'>
  mutex: KeyedMutexLike
}

/** Sessions passed over without a read between two yields to the event loop. */
const SKIPS_PER_TURN = 1000

/**
 * Checks every stored session once, reading only the documents that may hold a record past
 * retention at `now`: after a first check, those whose first record's time has come and those
 * written since (the session store keeps both). `stopped` ends it early (a closing server).
 */
export async function checkStoredSessions(options: IdempotencyCheckOptions, now = Date.now(), stopped: () => boolean = () => false): Promise<void> {
  const slots = await options.sessions.listSlots()
  let skipped = 0
  for (const slot of slots) {
    if (stopped()) return
    if (!options.sessions.mayHoldExpired(slot, now)) {
      // A pass over 100,000 known sessions is a few ms of map lookups: yielded now and then all the same.
      if (++skipped % SKIPS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve))
      continue
    }
    // A document this version cannot use (a newer one's) or storage that fails is left for the
    // requests to report: the check goes on with the next session, and tries again next time.
    await options.mutex.run(slot, () => options.sessions.expireIdempotency(principalOfSlot(slot), now)).catch(() => false)
    // On memory storage a read never waits for I/O: without this, thousands of sessions would
    // be checked in one go, with every request waiting behind them.
    await new Promise((resolve) => setImmediate(resolve))
  }
  // Sessions deleted by another process (`sandbox keys reset`) leave no time behind.
  options.sessions.keepExpiryTimesOf(slots)
}

/**
 * Removes idempotency records past retention from sessions nobody writes to: each request's save
 * prunes its own session's, but a key used once (a CI run's generated keys) kept its records, most
 * of its document, and its batch files for as long as the storage lived. Sessions are checked one
 * at a time under their mutex, and only a document holding an expired record is rewritten.
 */
export function startIdempotencyExpiry(options: IdempotencyCheckOptions & {
  /** The first check after the start (later ones come every IDEMPOTENCY_SWEEP_MS). */
  firstMs: number
}): RepeatingSweep {
  return startRepeatingSweep((stopped) => checkStoredSessions(options, Date.now(), stopped).catch(() => {}), options.firstMs, IDEMPOTENCY_SWEEP_MS)
}
