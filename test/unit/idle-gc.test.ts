import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { capYoungGeneration } from '../../src/server/young-generation-cap.js'
import { type CollectionKind, FIRST_V8_WITH_MEMORY_REDUCING_GC, pickCollection, startIdleGc } from '../../src/server/idle-gc.js'
import { installWallClock } from '../helpers/wall-clock.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const MB = 1024 * 1024

/** Resident memory less V8's young generation, which may stay grown after a burst (serve caps it, young-generation-cap.ts). */
const readRssBesideYoungGeneration = (): number => process.memoryUsage.rss() - (getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0)

describe('idle garbage collection', () => {
  it('collects a few times once idle, not while busy, and again after new activity', async () => {
    const collectedAt: number[] = []
    // Polled rather than slept for: on a busy machine timers fire late, and each full collection takes longer.
    const waitForCollections = async (count: number) => {
      for (const until = Date.now() + 10_000; collectedAt.length < count && Date.now() < until;) await sleep(10)
    }
    const idle = startIdleGc({ idleMs: 300, intervalMs: 20, onCollect: () => collectedAt.push(performance.now()) })
    try {
      const firstActivity = performance.now()
      idle.noteActivity()
      await waitForCollections(5)
      expect(collectedAt).toHaveLength(5)
      expect(collectedAt[0]! - firstActivity).toBeGreaterThanOrEqual(300) // not before idleMs without activity
      await sleep(200)
      expect(collectedAt).toHaveLength(5) // the rounds of one idle period, then it waits for activity
      const lastActivity = performance.now()
      idle.noteActivity()
      await waitForCollections(10)
      expect(collectedAt).toHaveLength(10)
      expect(collectedAt[5]! - lastActivity).toBeGreaterThanOrEqual(300)
      await sleep(200)
      expect(collectedAt).toHaveLength(10)
    } finally {
      idle.stop()
    }
  })

  it('still collects once idle when the wall clock is set back an hour', async () => {
    let collections = 0
    const clock = installWallClock()
    const idle = startIdleGc({ idleMs: 100, intervalMs: 20, onCollect: () => collections++ })
    try {
      idle.noteActivity()
      clock.jump(-3_600_000)
      for (const until = performance.now() + 10_000; collections < 5 && performance.now() < until;) await sleep(10)
      expect(collections).toBe(5)
    } finally {
      idle.stop()
      clock.restore()
    }
  })

  it('reduces memory in the last round of each idle period on V8 12 and later, never on V8 11', () => {
    const rounds = [1, 2, 3, 4, 5]
    expect(rounds.map((round) => pickCollection(round, 13))).toEqual(['full', 'full', 'full', 'full', 'memory-reducing'])
    expect(rounds.map((round) => pickCollection(round, FIRST_V8_WITH_MEMORY_REDUCING_GC))).toEqual(['full', 'full', 'full', 'full', 'memory-reducing'])
    expect(rounds.map((round) => pickCollection(round, 11))).toEqual(['full', 'full', 'full', 'full', 'full'])
    expect(pickCollection(5, Number.NaN)).toBe('full')
  })

  it('passes the V8 version it is given to the choice of each round', async () => {
    const kinds: Record<string, CollectionKind[]> = { '11.3.244.8-node.33': [], '13.6.233.17-node.53': [] }
    const idles = Object.entries(kinds).map(([v8Version, seen]) => startIdleGc({ idleMs: 0, intervalMs: 10, v8Version, onCollect: (kind) => seen.push(kind) }))
    try {
      for (const until = Date.now() + 10_000; Object.values(kinds).some((seen) => seen.length < 5) && Date.now() < until;) await sleep(10)
    } finally {
      for (const idle of idles) idle.stop()
    }
    expect(kinds['11.3.244.8-node.33']).toEqual(['full', 'full', 'full', 'full', 'full'])
    expect(kinds['13.6.233.17-node.53']).toEqual(['full', 'full', 'full', 'full', 'memory-reducing'])
  })

  it('gives back the memory a burst of work left in the heap once idle', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    // As in serve: otherwise V8 24 grows its young generation to 128 MB in the burst, out of the pages it freed.
    const cap = capYoungGeneration()
    gc()
    const before = readRssBesideYoungGeneration()
    // ~150 MB that lives long enough to reach the old generation, as a burst of requests' documents does.
    // In turns, as requests come: the young generation's cap acts between them, after collections.
    const burst = async (): Promise<number> => {
      const held: object[][] = []
      for (let i = 0; i < 90; i++) {
        held.push(Array.from({ length: 20_000 }, (_, j) => ({ j, text: `loan ${j}` })))
        await new Promise(setImmediate)
      }
      return held.length
    }
    await burst()
    const grown = readRssBesideYoungGeneration() - before
    let collections = 0
    const idle = startIdleGc({ idleMs: 0, intervalMs: 20, onCollect: () => collections++ })
    try {
      for (const until = Date.now() + 10_000; collections < 5 && Date.now() < until;) await sleep(10)
      // V8 11 unmaps freed pages on a background thread: given a few seconds on a busy machine.
      for (const until = Date.now() + 5_000; readRssBesideYoungGeneration() - before >= 30 * MB && Date.now() < until;) await sleep(50)
    } finally {
      idle.stop()
      cap.stop()
    }
    const kept = readRssBesideYoungGeneration() - before
    expect(grown).toBeGreaterThan(50 * MB) // the burst did grow the process
    // Without the memory-reducing round Node 22 and 24 kept 125-134 MB of it resident (measured), Node 20 7-14 MB.
    expect(kept).toBeLessThan(30 * MB)
  })
})
