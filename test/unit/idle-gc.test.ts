import { describe, expect, it } from 'vitest'
import { startIdleGc } from '../../src/server/idle-gc.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('idle garbage collection', () => {
  it('collects a few times once idle, not while busy, and again after new activity', async () => {
    let last = Date.now()
    let collections = 0
    const idle = startIdleGc({ idleMs: 300, intervalMs: 20, lastActivity: () => last, onCollect: () => collections++ })
    try {
      await sleep(100)
      expect(collections).toBe(0) // not idle long enough yet
      await sleep(600)
      expect(collections).toBe(5) // the rounds of one idle period, then it waits
      last = Date.now()
      await sleep(100)
      expect(collections).toBe(5)
      await sleep(600)
      expect(collections).toBe(10)
    } finally {
      idle.stop()
    }
  })
})
