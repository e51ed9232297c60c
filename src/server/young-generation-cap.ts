import { PerformanceObserver } from 'node:perf_hooks'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'

/** Young generation size (both semi-spaces) past which V8 may not grow it. */
export const YOUNG_GENERATION_CAP_BYTES = 16 * 1024 * 1024

/** What the cap reads, sets and listens to; the default is this process's V8. */
export interface YoungGenerationControls {
  readSize(): number
  stopGrowth(): void
  /** Calls `onGc` after garbage collections (the only moments the young generation grows); returns an unsubscribe. */
  watchGc(onGc: () => void): () => void
}

const v8Controls: YoungGenerationControls = {
  readSize: () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0,
  // Read by V8 at each growth, unlike --max-semi-space-size, which only counts at start.
  stopGrowth: () => setFlagsFromString('--semi-space-growth-factor=1'),
  watchGc(onGc) {
    const observer = new PerformanceObserver(onGc)
    observer.observe({ entryTypes: ['gc'] })
    return () => observer.disconnect()
  },
}

/**
 * Stops V8's young generation from growing once it reaches 16 MB. Under load V8 doubles it up to
 * 32 MB and keeps that committed for good, though it is empty once the load ends; 16 MB served
 * the benchmark's loads as fast (measured) and leaves 16 MB less resident. It looks after garbage
 * collections only, so an idle server is never woken for it.
 */
export function capYoungGeneration(options: { controls?: YoungGenerationControls } = {}): { stop(): void } {
  const controls = options.controls ?? v8Controls
  const reached = (): boolean => {
    if (controls.readSize() < YOUNG_GENERATION_CAP_BYTES) return false
    controls.stopGrowth()
    return true
  }
  if (reached()) return { stop() {} }
  const unwatch = controls.watchGc(() => {
    if (reached()) unwatch()
  })
  return { stop: unwatch }
}
