import { describe, expect, it } from 'vitest'
import { hasAtMostDecimals, roundBtc, roundPercent, roundUsd, toExactFraction, toUnits } from '../../src/domain/money.js'

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

describe('exact figures for the LTV limit', () => {
  it('reads a config number as the decimal it is written as, in every notation JavaScript prints', () => {
    expect(toExactFraction(95000.01)).toEqual({ n: 9500001n, d: 100n })
    expect(toExactFraction(50)).toEqual({ n: 50n, d: 1n })
    expect(toExactFraction(1.5e-7)).toEqual({ n: 15n, d: 100000000n })
    // Not reduced: only comparisons use it.
    expect(toExactFraction(2.5e21)).toEqual({ n: 25000000000000000000000n, d: 10n })
  })

  it('counts rounded amounts in whole cents and satoshis, float noise included', () => {
    expect(toUnits(0.29, 2)).toBe(29n)
    expect(toUnits(19999.99 + 199.99, 2)).toBe(2019998n)
    expect(toUnits(0.09499999, 8)).toBe(9499999n)
  })
})
