import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { capYoungGeneration, LAST_CHECKED_V8_MAJOR, YOUNG_GENERATION_CAP_BYTES } from '../../src/server/young-generation-cap.js'

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
    cap.stop()
  })

  it('stops watching garbage collections when stopped', () => {
    const { v8, controls } = fakeV8(1024 * 1024)
    capYoungGeneration({ controls }).stop()
    expect(v8.onGc).toBeUndefined()
  })

  it('caps on the V8 versions of Node 20, 22, 24 and 26', () => {
    for (const v8Version of ['11.3.244.8-node.38', '12.4.254.21-node.57', '13.6.233.17-node.53', '14.6.202.34-node.34']) {
      const { v8, controls } = fakeV8(YOUNG_GENERATION_CAP_BYTES)
      capYoungGeneration({ controls, v8Version }).stop()
      expect(v8.calls, v8Version).toEqual(['stop'])
    }
  })

  // V8 prints "Error: unrecognized flag" on stdout for a flag it lacks (into serve --json-logs),
  // so a V8 not checked to have the flag must get no flag at all.
  it('sets no flag and watches nothing on a V8 newer than the last one checked', () => {
    for (const v8Version of [`${LAST_CHECKED_V8_MAJOR + 1}.0.1`, 'unknown']) {
      const { v8, controls, gc } = fakeV8(YOUNG_GENERATION_CAP_BYTES)
      const cap = capYoungGeneration({ controls, v8Version })
      gc()
      expect(v8.calls, v8Version).toEqual([])
      expect(v8.onGc, v8Version).toBeUndefined()
      cap.stop()
    }
  })

  it("has the flag in this process's V8 when its version is one the cap runs on", () => {
    if (Number.parseInt(process.versions.v8, 10) > LAST_CHECKED_V8_MAJOR) return
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' })
    expect(options).toContain('--semi-space-growth-factor')
  })
})
