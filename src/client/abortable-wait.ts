/**
 * Waits MS, or rejects with SIGNAL's reason as soon as it aborts, its timer cleared so that nothing
 * is left to keep the process alive. Without a signal, a plain timer.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * One attempt's signal: aborted with SIGNAL's reason when it aborts (if given), or after
 * TIMEOUT_MS with TIMEOUT_ERROR. `dispose` clears the timer and the listener once the attempt is over.
 */
export function createAttemptSignal(signal: AbortSignal | undefined, timeoutMs: number, timeoutError: () => unknown): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController()
  const onAbort = () => controller.abort(signal!.reason)
  const timer = setTimeout(() => controller.abort(timeoutError()), timeoutMs)
  if (signal?.aborted) onAbort()
  else signal?.addEventListener('abort', onAbort, { once: true })
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    },
  }
}
