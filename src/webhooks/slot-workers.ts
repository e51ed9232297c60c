/**
 * One worker per session slot: at most one run at a time, a kick during a run reruns it once
 * after, and a run can be put off with a timer. The dispatcher's delivery work runs on these.
 */
export function createSlotWorkers(options: {
  work: (slot: string) => Promise<void>
  /** When a run fails (storage trouble), how long until it tries again. */
  retryMs: number
  logError: (error: unknown) => void
}) {
  const running = new Map<string, Promise<void>>()
  const again = new Set<string>()
  const timers = new Map<string, NodeJS.Timeout>()
  /** Runs waiting for their slot's next kick (see `nextKick`). */
  const kickWaiters = new Map<string, { kicked: Promise<void>; resolve: () => void }>()
  /** Callers waiting for a slot's runs to end (see `settled`). */
  const settledWaiters = new Map<string, Array<() => void>>()
  let stopped = false

  function notifySettled(slot: string): void {
    const waiters = settledWaiters.get(slot)
    if (!waiters) return
    settledWaiters.delete(slot)
    for (const resolve of waiters) resolve()
  }

  /** Starts (or re-runs after the current run) the worker of `slot`. */
  function kick(slot: string): void {
    if (stopped) return
    const timer = timers.get(slot)
    if (timer) {
      clearTimeout(timer)
      timers.delete(slot)
    }
    if (running.has(slot)) {
      again.add(slot)
      notifyKicked(slot)
      return
    }
    const run = options.work(slot).catch((error) => {
      options.logError(error)
      // Commits wake a worker only when they add work, so a failed one must wake itself.
      if (!stopped) wakeLater(slot, options.retryMs)
    }).finally(() => {
      running.delete(slot)
      notifyKicked(slot)
      if (again.delete(slot)) kick(slot)
      if (!running.has(slot)) notifySettled(slot)
    })
    running.set(slot, run)
  }

  function notifyKicked(slot: string): void {
    kickWaiters.get(slot)?.resolve()
    kickWaiters.delete(slot)
  }

  /**
   * Resolves at the next kick of `slot` while its run goes on (the kick still reruns it after):
   * a run that waits for one target's receiver looks at once at what the kick brought the other.
   */
  function nextKick(slot: string): Promise<void> {
    let waiter = kickWaiters.get(slot)
    if (!waiter) {
      let resolve = () => {}
      const kicked = new Promise<void>((done) => (resolve = done))
      kickWaiters.set(slot, (waiter = { kicked, resolve }))
    }
    return waiter.kicked
  }

  /** Kicks `slot` after `delayMs`, replacing a wake-up already set. */
  function wakeLater(slot: string, delayMs: number): void {
    clearTimeout(timers.get(slot))
    const timer = setTimeout(() => {
      timers.delete(slot)
      kick(slot)
    }, delayMs)
    timer.unref()
    timers.set(slot, timer)
  }

  /** Resolves once no worker runs. */
  const idle = (): Promise<void> => Promise.all(running.values()).then(() => undefined)

  /** Resolves once `slot` has no run in progress or asked for after it (a timer set for later does not count). */
  function settled(slot: string): Promise<void> {
    if (!running.has(slot)) return Promise.resolve()
    return new Promise((resolve) => {
      const waiters = settledWaiters.get(slot)
      if (waiters) waiters.push(resolve)
      else settledWaiters.set(slot, [resolve])
    })
  }

  /** Starts no more runs or timers; resolves once the runs in progress have ended. */
  async function stop(): Promise<void> {
    stopped = true
    for (const timer of timers.values()) clearTimeout(timer)
    timers.clear()
    await Promise.all(running.values())
  }

  return { kick, wakeLater, nextKick, idle, settled, stop, isRunning: (slot: string) => running.has(slot) }
}
