/** A sweep started by `startRepeatingSweep`. */
export interface RepeatingSweep {
  /** Starts no more sweeps; resolves once the one under way has stopped. */
  stop(): Promise<void>
}

/**
 * Runs `sweep` at `firstMs` after the start, then `everyMs` after each one ends (never two at
 * once, however long one takes). `sweep` is told to give up early once `stop` is called; its
 * timers do not keep the process alive.
 */
export function startRepeatingSweep(sweep: (stopped: () => boolean) => Promise<unknown>, firstMs: number, everyMs: number): RepeatingSweep {
  let stopped = false
  let running: Promise<unknown> | undefined
  let timer: NodeJS.Timeout
  const schedule = (delayMs: number) => {
    timer = setTimeout(() => {
      running = sweep(() => stopped).finally(() => {
        running = undefined
        if (!stopped) schedule(everyMs)
      })
    }, delayMs)
    timer.unref()
  }
  schedule(firstMs)
  return {
    async stop(): Promise<void> {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
