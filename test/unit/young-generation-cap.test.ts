import { describe, expect, it } from 'vitest'
import { capYoungGeneration, YOUNG_GENERATION_CAP_BYTES } from '../../src/server/young-generation-cap.js'

function fakeV8(initialSize: number) {
  const v8 = { size: initialSize, calls: [] as string[], onGc: undefined as (() => void) | undefined }
  const controls = {
    readSize: () => v8.size,
    stopGrowth: () => void v8.calls.push('stop'),
    allowGrowth: () => void v8.calls.push('allow'),
    watchGc: (callback: () => void) => {
      v8.onGc = callback
      return () => { v8.onGc = undefined }
    },
  }
  return { v8, controls, gc: () => v8.onGc?.() }
}

describe('young generation cap', () => {
  it('stops growth when the young generation reaches the cap, and only then', () => {
    const { v8, controls, gc } = fakeV8(1024 * 1024)
    const cap = capYoungGeneration({ controls })
    gc()
    gc()
    expect(v8.calls).toEqual([])
    v8.size = YOUNG_GENERATION_CAP_BYTES
    gc()
    gc()
    expect(v8.calls).toEqual(['stop'])
    cap.stop()
  })

  it('allows growth again after V8 shrinks the young generation, and stops it again at the cap', () => {
    const { v8, controls, gc } = fakeV8(YOUNG_GENERATION_CAP_BYTES)
    const cap = capYoungGeneration({ controls })
    expect(v8.calls).toEqual(['stop'])
    // V8's memory reducer shrinks the young generation after an idle spell.
    v8.size = 1024 * 1024
    gc()
    expect(v8.calls).toEqual(['stop', 'allow'])
    v8.size = 8 * 1024 * 1024
    gc()
    v8.size = YOUNG_GENERATION_CAP_BYTES
    gc()
    expect(v8.calls).toEqual(['stop', 'allow', 'stop'])
  })

  it('stops watching garbage collections when stopped', () => {
    const { v8, controls } = fakeV8(1024 * 1024)
    capYoungGeneration({ controls }).stop()
    expect(v8.onGc).toBeUndefined()
  })
})
