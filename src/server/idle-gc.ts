import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** Full collections per idle period: V8 compacts a fragmented heap a part at a time. */
const ROUNDS = 5

/**
 * Runs a few full garbage collections, a second apart, once the server has been idle for
 * `idleMs`, then waits for the next activity. V8 otherwise keeps the heap a burst of requests grew
 * for a long time, and a sandbox sits idle on a developer machine or CI runner most of its life.
 */
export function startIdleGc(options: { idleMs: number; lastActivity: () => number; intervalMs?: number; onCollect?: () => void }): { stop(): void } {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  let collectedFor = -1
  let rounds = 0
  const timer = setInterval(() => {
    const last = options.lastActivity()
    if (Date.now() - last < options.idleMs) return
    if (last !== collectedFor) {
      collectedFor = last
      rounds = 0
    }
    if (rounds >= ROUNDS) return
    rounds++
    gc()
    options.onCollect?.()
  }, options.intervalMs ?? 1000)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
