import { describe, expect, it } from 'vitest'
import { capYoungGeneration, YOUNG_GENERATION_CAP_BYTES } from '../../src/server/young-generation-cap.js'

describe('young generation cap', () => {
  it('stops growth once, when the young generation reaches the cap, and then stops watching', () => {
    let size = 1024 * 1024
    let reads = 0
    let stops = 0
    let onGc: (() => void) | undefined
    const cap = capYoungGeneration({
      controls: {
        readSize: () => (reads++, size),
        stopGrowth: () => void stops++,
        watchGc: (callback) => {
          onGc = callback
          return () => { onGc = undefined }
        },
      },
    })
    onGc?.()
    onGc?.()
    expect(stops).toBe(0)
    size = YOUNG_GENERATION_CAP_BYTES
    onGc?.()
    expect(stops).toBe(1)
    const readsAfter = reads
    onGc?.()
    expect(reads).toBe(readsAfter)
    cap.stop()
  })
})
