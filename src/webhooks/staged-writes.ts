import type { Principal } from '../server/auth.js'
import type { KeyedMutexLike } from '../server/services.js'
import type { SessionStore } from '../server/session-store.js'
import { sessionSlotOf, type SessionDoc } from '../server/session-doc.js'
import { UnwrittenError } from '../storage/unwritten-error.js'

/**
 * Session documents changed in memory and written a moment later, all at once: for records whose
 * loss in a crash is harmless (a failed webhook attempt, which then simply runs again). A save of
 * the session in between writes the change along with its own. Which sessions are staged is the
 * session store's to know; this only decides when they are written.
 */
export function createStagedWrites(options: {
  sessions: SessionStore
  mutex: KeyedMutexLike
  delayMs: number
  /**
   * Whether close writes what is held: not for storage that ends with the process, where writing
   * thousands of held documents would only delay the stop.
   */
  flushOnClose: boolean
  logError: (error: unknown) => void
}) {
  const { sessions, mutex } = options
  let timer: NodeJS.Timeout | undefined
  let flushing: Promise<void> = Promise.resolve()
  let stopped = false
  /** Why the last flush failed: what a close that could not write everything reports. */
  let refusal: Error | undefined
  /** How many sessions the last flush failed to write. */
  let unwrittenSessions = 0

  /**
   * Writes every staged session (and with `all`, every patched one too); sessions staged while it
   * runs wait for the next flush.
   */
  function flush(all = false): Promise<void> {
    clearTimeout(timer)
    timer = undefined
    const written = flushing.then(async () => {
      const principals = new Map((all ? [...sessions.listStaged(), ...sessions.listPatched()] : sessions.listStaged()).map((principal) => [sessionSlotOf(principal), principal]))
      const outcomes = await Promise.all([...principals].map(([slot, principal]) => mutex.run(slot, () => sessions.flushStaged(principal)).then(() => undefined, (error: Error) => error)))
      const failed = outcomes.filter((error) => error !== undefined)
      // Counted here: a write that failed may also have dropped what it was writing (doc-store.ts).
      unwrittenSessions = failed.length
      if (failed.length > 0) throw failed[0]
    })
    flushing = written.then(() => undefined, (error: Error) => {
      refusal = error
      options.logError(error)
    })
    return flushing
  }

  /** Keeps `doc` as the session's current document; call it under the session's mutex. */
  function stage(principal: Principal, doc: SessionDoc): void {
    sessions.stage(principal, doc)
    if (timer || stopped) return
    timer = setTimeout(() => void flush(), options.delayMs)
    timer.unref()
  }

  /**
   * Writes what is staged or patched (if `flushOnClose`) and stops the timer for good; rejects
   * with an UnwrittenError when storage still refuses some of it (redis gone).
   */
  async function close(): Promise<void> {
    stopped = true
    if (!options.flushOnClose) {
      clearTimeout(timer)
      return flushing
    }
    await flush(true)
    if (unwrittenSessions > 0) {
      const keys = unwrittenSessions === 1 ? '1 key' : `${unwrittenSessions} keys`
      throw new UnwrittenError(`the record of webhook attempts of ${keys}, which run again after a restart (a delivery the receiver accepted may be sent twice)`, refusal)
    }
  }

  return { stage, flush: () => flush(true), close }
}
