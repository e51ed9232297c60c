import { describe, expect, it } from 'vitest'
import { capYoungGeneration, YOUNG_GENERATION_CAP_BYTES } from '../../src/server/young-generation-cap.js'

describe('young generation cap', () => {
  it('stops growth once, when the young generation reaches the cap, and then stops watching', async () => {
    let size = 1024 * 1024
    let reads = 0
    let stops = 0
    const cap = capYoungGeneration({ intervalMs: 5, controls: { readSize: () => (reads++, size), stopGrowth: () => void stops++ } })
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(stops).toBe(0)
    size = YOUNG_GENERATION_CAP_BYTES
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(stops).toBe(1)
    const readsAfter = reads
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(reads).toBe(readsAfter)
    cap.stop()
  })

})
