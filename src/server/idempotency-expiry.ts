import type { KeyedMutexLike } from './services.js'
import { principalOfSlot } from './session-doc.js'
import type { SessionStore } from './session-store.js'

/** How often every stored session is checked for idempotency records past their 24 hours. */
export const IDEMPOTENCY_SWEEP_MS = 60 * 60 * 1000

/** The first check after a start: soon, since a server restarted daily would otherwise never run one. */
export const FIRST_IDEMPOTENCY_SWEEP_MS = 60 * 1000

/**
 * Removes idempotency records past retention from sessions nobody writes to: each request's save
 * prunes its own session's, but a key used once (a CI run's generated keys) kept its records, most
 * of its document, and its batch files for as long as the storage lived. Sessions are checked one
 * at a time under their mutex, and only a document holding an expired record is rewritten.
 */
export function startIdempotencyExpiry(options: {
  sessions: Pick<SessionStore, 'listSlots' | 'expireIdempotency'>
  mutex: KeyedMutexLike
  intervalMs?: number
  firstMs?: number
}) {
  let stopped = false
  let running: Promise<unknown> | undefined

  /** Checks every stored session once; resolves with how many documents were rewritten. */
  async function sweep(now = Date.now()): Promise<number> {
    let rewritten = 0
    for (const slot of await options.sessions.listSlots()) {
      if (stopped) break
      // A document this version cannot use (a newer one's) or storage that fails is left for the
      // requests to report: the sweep goes on with the next session, and tries again next time.
      const expired = await options.mutex.run(slot, () => options.sessions.expireIdempotency(principalOfSlot(slot), now)).catch(() => false)
      if (expired) rewritten++
      // On memory storage a read never waits for I/O: without this, thousands of sessions would
      // be checked in one go, with every request waiting behind them.
      await new Promise((resolve) => setImmediate(resolve))
    }
    return rewritten
  }

  let timer: NodeJS.Timeout
  const schedule = (delayMs: number) => {
    timer = setTimeout(() => {
      running = sweep().catch(() => 0).finally(() => {
        running = undefined
        if (!stopped) schedule(options.intervalMs ?? IDEMPOTENCY_SWEEP_MS)
      })
    }, delayMs)
    timer.unref()
  }
  schedule(options.firstMs ?? FIRST_IDEMPOTENCY_SWEEP_MS)

  return {
    sweep,
    /** Starts no more checks; resolves once the one under way has stopped. */
    async stop(): Promise<void> {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}

/** An expiry started by startIdempotencyExpiry. */
export type IdempotencyExpiry = ReturnType<typeof startIdempotencyExpiry>
