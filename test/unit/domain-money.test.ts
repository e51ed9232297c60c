import { describe, expect, it } from 'vitest'
import { hasAtMostDecimals, roundBtc, roundPercent, roundUsd } from '../../src/domain/money.js'

describe('money rounding', () => {
  it('rounds USD half away from zero despite binary float representation', () => {
    expect(roundUsd(1.005)).toBe(1.01)
    expect(roundUsd(-1.005)).toBe(-1.01)
    expect(roundUsd(0.1 + 0.2)).toBe(0.3)
    expect(roundUsd(19999.99 + 199.99)).toBe(20199.98)
  })

  it('rounds BTC to satoshis and percentages to 2 decimals', () => {
    expect(roundBtc(0.1 + 0.2)).toBe(0.3)
    expect(roundBtc(1.5 - 0.05)).toBe(1.45)
    expect(roundBtc(0.123456785)).toBe(0.12345679)
    expect(roundPercent((20000 / 47500) * 100)).toBe(42.11)
  })

  it('tells amounts within a precision from finer ones, ignoring float noise', () => {
    expect(hasAtMostDecimals(19999.99 + 199.99, 2)).toBe(true)
    expect(hasAtMostDecimals(100.001, 2)).toBe(false)
    expect(hasAtMostDecimals(0.12345678, 8)).toBe(true)
    expect(hasAtMostDecimals(0.123456789, 8)).toBe(false)
    // Whole numbers past what scaling can hold are still whole: their limit refuses them, not this.
    expect(hasAtMostDecimals(1e308, 8)).toBe(true)
    expect(hasAtMostDecimals(Number.MAX_VALUE, 2)).toBe(true)
  })
})
