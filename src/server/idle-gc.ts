import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** Full collections per idle period: V8 compacts a fragmented heap a part at a time. */
const ROUNDS = 5

/**
 * The oldest V8 major version whose `gc()` takes `{ flavor: 'last-resort' }` (checked on V8 12.4,
 * Node 22, and 13.6, Node 24). V8 11 (Node 20) reads any object as `gc(true)`, a young-generation
 * collection only; a later V8 that dropped the option would read `type: 'major'` alone, a full one.
 */
export const FIRST_V8_WITH_MEMORY_REDUCING_GC = 12

/** A full collection, or one that also hands the heap pages V8 keeps for reuse back to the system. */
export type CollectionKind = 'full' | 'memory-reducing'

/**
 * How round `round` (1 to 5) of an idle period collects on V8 major version `v8Major`. From V8 12
 * on, a full collection keeps the pages it frees for reuse, resident, until a memory-reducing one:
 * after the benchmark's load that was 90-150 MB on Node 22 and 24 at 10 s, which V8's own memory
 * reducer gave back only 20-30 s later. The last round reduces, so the pages the rounds before it
 * freed go too; Node 20 gives its freed pages back by itself and keeps plain full collections.
 */
export function pickCollection(round: number, v8Major: number): CollectionKind {
  return round === ROUNDS && v8Major >= FIRST_V8_WITH_MEMORY_REDUCING_GC ? 'memory-reducing' : 'full'
}

/**
 * Runs a few full garbage collections, a second apart, once the server has been idle for
 * `idleMs`, then waits for the next activity. V8 otherwise keeps the heap a burst of requests grew
 * for a long time, and a sandbox sits idle on a developer machine or CI runner most of its life.
 * `v8Version` (default this process's) picks the kind of each collection ({@link pickCollection}).
 * The server calls `noteActivity()` for each request. Idle time is measured on the monotonic
 * clock: on the wall clock, one set back an hour put off the collections by that hour.
 */
export function startIdleGc(options: {
  idleMs: number
  intervalMs?: number
  v8Version?: string
  onCollect?: (kind: CollectionKind) => void
}): { noteActivity(): void; stop(): void } {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (options?: object) => void
  const v8Major = Number.parseInt(options.v8Version ?? process.versions.v8, 10)
  let last = performance.now()
  let collectedFor = -1
  let rounds = 0
  const timer = setInterval(() => {
    if (performance.now() - last < options.idleMs) return
    if (last !== collectedFor) {
      collectedFor = last
      rounds = 0
    }
    if (rounds >= ROUNDS) return
    rounds++
    const kind = pickCollection(rounds, v8Major)
    // No argument at all for a plain one: gc(undefined) is gc(false) on V8 11 but gc(true), young generation only, on V8 12+.
    if (kind === 'memory-reducing') gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
    else gc()
    options.onCollect?.(kind)
  }, options.intervalMs ?? 1000)
  timer.unref()
  return {
    noteActivity: () => { last = performance.now() },
    stop: () => clearInterval(timer),
  }
}
