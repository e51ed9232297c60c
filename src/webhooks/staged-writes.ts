import type { Principal } from '../server/auth.js'
import type { KeyedMutexLike } from '../server/services.js'
import type { SessionStore } from '../server/session-store.js'
import { sessionSlotOf, type SessionDoc } from '../server/session-doc.js'

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

  /**
   * Writes every staged session (and with `all`, every patched one too); sessions staged while it
   * runs wait for the next flush.
   */
  function flush(all = false): Promise<void> {
    clearTimeout(timer)
    timer = undefined
    const written = flushing.then(() => {
      const principals = new Map((all ? [...sessions.listStaged(), ...sessions.listPatched()] : sessions.listStaged()).map((principal) => [sessionSlotOf(principal), principal]))
      return Promise.all([...principals].map(([slot, principal]) => mutex.run(slot, () => sessions.flushStaged(principal))))
    })
    flushing = written.then(() => undefined, options.logError)
    return flushing
  }

  /** Keeps `doc` as the session's current document; call it under the session's mutex. */
  function stage(principal: Principal, doc: SessionDoc): void {
    sessions.stage(principal, doc)
    if (timer || stopped) return
    timer = setTimeout(() => void flush(), options.delayMs)
    timer.unref()
  }

  /** Writes what is staged or patched (if `flushOnClose`) and stops the timer for good. */
  function close(): Promise<void> {
    stopped = true
    if (options.flushOnClose) return flush(true)
    clearTimeout(timer)
    return flushing
  }

  return { stage, flush: () => flush(true), close }
}
