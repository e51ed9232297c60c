/**
 * What to do when each signal aborts, for the waits and attempts in progress under it. A caller's
 * one signal may cover many requests at once (Promise.all through one client): a listener each
 * would pass the 10 after which Node warns of a leak, so each signal gets one, shared.
 */
const onAbortBySignal = new WeakMap<AbortSignal, Set<() => void>>()

/** Calls ON_ABORT when SIGNAL aborts, until the function returned is called. */
function followAbort(signal: AbortSignal, onAbort: () => void): () => void {
  let callbacks = onAbortBySignal.get(signal)
  if (!callbacks) {
    const shared = new Set<() => void>()
    callbacks = shared
    onAbortBySignal.set(signal, shared)
    signal.addEventListener('abort', () => {
      for (const callback of [...shared]) callback()
      shared.clear()
    }, { once: true })
  }
  const mine = callbacks
  mine.add(onAbort)
  return () => { mine.delete(onAbort) }
}

/**
 * Waits MS, or rejects with SIGNAL's reason as soon as it aborts, its timer cleared so that nothing
 * is left to keep the process alive. Without a signal, a plain timer.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const stopFollowing = signal ? followAbort(signal, () => {
      clearTimeout(timer)
      reject(signal.reason)
    }) : undefined
    const timer = setTimeout(() => {
      stopFollowing?.()
      resolve()
    }, ms)
  })
}

/**
 * One attempt's signal: aborted with SIGNAL's reason when it aborts (if given), or after
 * TIMEOUT_MS with TIMEOUT_ERROR, or by `abort` (the caller is done with the answer). `dispose`
 * clears the timer and the listener once the attempt is over.
 */
export function createAttemptSignal(signal: AbortSignal | undefined, timeoutMs: number, timeoutError: () => unknown): { signal: AbortSignal; abort(): void; dispose(): void } {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(timeoutError()), timeoutMs)
  let stopFollowing: (() => void) | undefined
  if (signal?.aborted) controller.abort(signal.reason)
  else if (signal) stopFollowing = followAbort(signal, () => controller.abort(signal.reason))
  return {
    signal: controller.signal,
    abort: () => controller.abort(),
    dispose: () => {
      clearTimeout(timer)
      stopFollowing?.()
    },
  }
}

/**
 * One signal for a call that a client-wide signal and the call's own both cancel, with the first
 * one's reason; `dispose` stops following them once the call is over. Not AbortSignal.any: a
 * long-lived client signal would collect a dependent signal per call.
 */
export function joinSignals(first: AbortSignal | undefined, second: AbortSignal | undefined): { signal: AbortSignal | undefined; dispose(): void } {
  if (!first || !second) return { signal: first ?? second, dispose: () => {} }
  const controller = new AbortController()
  const aborted = [first, second].find((signal) => signal.aborted)
  if (aborted) {
    controller.abort(aborted.reason)
    return { signal: controller.signal, dispose: () => {} }
  }
  const stops = [first, second].map((signal) => followAbort(signal, () => controller.abort(signal.reason)))
  return { signal: controller.signal, dispose: () => { for (const stop of stops) stop() } }
}
