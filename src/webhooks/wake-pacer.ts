/** What a wake pacer needs: how to start a session's worker, and when its runs have ended. */
export interface WakePacerOptions {
  /** Sessions woken per destination and still running, at most. */
  limit: number
  kick(slot: string): void
  settled(slot: string): Promise<void>
}

interface Lane {
  running: number
  /** Sessions to wake, in the order they were handed over (their heads' due order). */
  waiting: string[]
}

/**
 * Wakes the sessions whose receiver takes connections again a few at a time per destination,
 * in the order they were handed over. Woken all at once, every waiting key's worker read its
 * document and went for a connection together: thousands of documents loaded in one moment (fs:
 * thousands of files open), and the API's answers waiting behind them for seconds. A session
 * woken keeps its place until its worker has nothing more to send now, so its events still go
 * out in order, one after the other. The dispatcher resumes a start's waiting sessions through
 * one too, in a single lane.
 */
export function createWakePacer(options: WakePacerOptions) {
  const lanes = new Map<string, Lane>()
  let stopped = false

  function pump(destination: string, lane: Lane): void {
    while (!stopped && lane.running < options.limit && lane.waiting.length > 0) {
      const slot = lane.waiting.shift()!
      lane.running++
      options.kick(slot)
      void options.settled(slot).then(() => {
        lane.running--
        if (lane.running === 0 && lane.waiting.length === 0) lanes.delete(destination)
        else pump(destination, lane)
      })
    }
  }

  return {
    /** Wakes `slot` once fewer than `limit` sessions woken for `destination` are running. */
    wake(destination: string, slot: string): void {
      if (stopped) return
      let lane = lanes.get(destination)
      if (!lane) lanes.set(destination, (lane = { running: 0, waiting: [] }))
      lane.waiting.push(slot)
      pump(destination, lane)
    },
    /** Whether any session it woke still runs, or waits for its turn. */
    get busy(): boolean {
      return lanes.size > 0
    },
    /** Wakes no more sessions. */
    stop(): void {
      stopped = true
      lanes.clear()
    },
  }
}
