import type { Principal } from '../server/auth.js'
import type { KeyedMutexLike } from '../server/services.js'
import type { SessionDoc, SessionStore } from '../server/session-store.js'

/**
 * Session documents changed in memory and written a moment later, all at once: for records whose
 * loss in a crash is harmless (a failed webhook attempt, which then simply runs again). A save of
 * the session in between writes the change along with its own.
 */
export function createStagedWrites(options: {
  sessions: SessionStore
  mutex: KeyedMutexLike
  delayMs: number
  principalOf: (slot: string) => Principal
  logError: (error: unknown) => void
}) {
  const { sessions, mutex, principalOf } = options
  const staged = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  let flushing: Promise<void> = Promise.resolve()
  let stopped = false

  /** Writes every staged session; sessions staged while it runs wait for the next flush. */
  function flush(): Promise<void> {
    clearTimeout(timer)
    timer = undefined
    const slots = [...staged]
    staged.clear()
    const written = flushing.then(() => Promise.all(slots.map((slot) => mutex.run(slot, () => sessions.flushStaged(principalOf(slot))))))
    flushing = written.then(() => undefined, options.logError)
    return flushing
  }

  /** Keeps `doc` as the session's current document; call it under the session's mutex. */
  function stage(slot: string, doc: SessionDoc): void {
    sessions.stage(principalOf(slot), doc)
    staged.add(slot)
    if (timer || stopped) return
    timer = setTimeout(() => void flush(), options.delayMs)
    timer.unref()
  }

  /** Writes what is staged and stops the timer for good. */
  function close(): Promise<void> {
    stopped = true
    return flush()
  }

  return { stage, flush, close }
}
