import { describe, expect, it } from 'vitest'
import { parseDuration, readDurationFlag } from '../../src/cli/duration-text.js'

describe('duration flags', () => {
  it('take exactly the longest duration a flag allows, and refuse 1 ms more', () => {
    expect(parseDuration('1h', 3_600_000)).toBe(3_600_000)
    expect(parseDuration('3600000ms', 3_600_000)).toBe(3_600_000)
    expect(() => parseDuration('3600001ms', 3_600_000)).toThrow('duration "3600001ms" is out of range: from 1ms to 1h')
    expect(() => readDurationFlag('--timeout', '61m', 3_600_000)).toThrow('--timeout: duration "61m" is out of range: from 1ms to 1h')
  })

  it('round fractions to the nearest millisecond', () => {
    expect(parseDuration('1.0006s')).toBe(1001)
    expect(parseDuration('0.5ms')).toBe(1)
    expect(parseDuration('2.5m')).toBe(150_000)
  })
})
