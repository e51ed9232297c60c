import { describe, expect, it } from 'vitest'
import { startIdleGc } from '../../src/server/idle-gc.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('idle garbage collection', () => {
  it('collects a few times once idle, not while busy, and again after new activity', async () => {
    let last = Date.now()
    const collectedAt: number[] = []
    // Polled rather than slept for: on a busy machine timers fire late, and each full collection takes longer.
    const waitForCollections = async (count: number) => {
      for (const until = Date.now() + 10_000; collectedAt.length < count && Date.now() < until;) await sleep(10)
    }
    const idle = startIdleGc({ idleMs: 300, intervalMs: 20, lastActivity: () => last, onCollect: () => collectedAt.push(Date.now()) })
    try {
      const firstActivity = last
      await waitForCollections(5)
      expect(collectedAt).toHaveLength(5)
      expect(collectedAt[0]! - firstActivity).toBeGreaterThanOrEqual(300) // not before idleMs without activity
      await sleep(200)
      expect(collectedAt).toHaveLength(5) // the rounds of one idle period, then it waits for activity
      last = Date.now()
      await waitForCollections(10)
      expect(collectedAt).toHaveLength(10)
      expect(collectedAt[5]! - last).toBeGreaterThanOrEqual(300)
      await sleep(200)
      expect(collectedAt).toHaveLength(10)
    } finally {
      idle.stop()
    }
  })
})
