/**
 * decisions.md "Loan math" and "Partner profile", restated in exact units: USDT in cents, BTC in
 * satoshis, LTV in hundredths of a percent. Written from the text, not from src/domain.
 */

import { divideDown, divideHalfUp, divideUp, toFraction, toUnits, type Fraction } from './exact.js'

/** The config figures of the loan math, exact. */
export interface ExactConfig {
  rate: Fraction
  maxLtv: Fraction
  fixed: Fraction
  months: bigint
  feePercent: Fraction
  loanMin: bigint
  loanMax: bigint
  collateralMin: bigint
  collateralMax: bigint
  levels: Array<{ level: string; min: bigint; percent: Fraction }>
}

/** The partner level table as fixtures/partner-levels.json has it. */
export interface LevelRow {
  level: string
  min_volume_usd: number
  reward_percent: number
}

function units(value: number, decimals: number): bigint {
  const exact = toUnits(value, decimals)
  if (exact === null) throw new Error(`config figure ${value} is finer than ${decimals} decimals`)
  return exact
}

/** Reads the config a GET /config answered. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function readExactConfig(config: any, levels: readonly LevelRow[]): ExactConfig {
  return {
    rate: toFraction(config.rates.btc_usd),
    maxLtv: toFraction(config.risk.max_ltv_percent),
    fixed: toFraction(config.borrow_rates.fixed),
    months: BigInt(config.terms.interest_payment_months),
    feePercent: toFraction(config.fees.loan_origination_percent),
    loanMin: units(config.limits.loan_amount.min, 2),
    loanMax: units(config.limits.loan_amount.max, 2),
    collateralMin: units(config.limits.collateral_btc.min, 8),
    collateralMax: units(config.limits.collateral_btc.max, 8),
    levels: [...levels]
      .sort((a, b) => a.min_volume_usd - b.min_volume_usd)
      .map((row) => ({ level: row.level, min: units(row.min_volume_usd, 2), percent: toFraction(row.reward_percent) })),
  }
}

const SATS = 100_000_000n

/** Origination fee = loan_amount × fee% / 100, in cents. */
export function feeOf(amount: bigint, c: ExactConfig): bigint {
  return divideHalfUp(amount * c.feePercent.n, 100n * c.feePercent.d)
}

/** Interest of one period = debt × fixed / 100 / 12 × months, in cents. */
export function periodInterestOf(debt: bigint, c: ExactConfig): bigint {
  return divideHalfUp(debt * c.fixed.n * c.months, 1200n * c.fixed.d)
}

/** LTV in hundredths of a percent: debt / (collateral × btc_usd) × 100; 0 with no debt. */
export function ltvOf(debt: bigint, sats: bigint, c: ExactConfig): bigint {
  if (debt === 0n) return 0n
  // percent = (debt/100) / (sats/1e8 × n/d) × 100 = debt × 1e8 × d / (sats × n); hundredths × 100.
  return divideHalfUp(debt * SATS * 100n * c.rate.d, sats * c.rate.n)
}

/** True when the LTV is above max_ltv_percent (exactly at it is allowed: "at most"). */
export function exceedsMax(debt: bigint, sats: bigint, c: ExactConfig): boolean {
  if (debt === 0n) return false
  if (sats === 0n) return true
  return debt * SATS * c.rate.d * c.maxLtv.d > c.maxLtv.n * sats * c.rate.n
}

/** Collateral value in cents (collateral × btc_usd). */
export function collateralValueOf(sats: bigint, c: ExactConfig): bigint {
  return divideHalfUp(sats * c.rate.n * 100n, SATS * c.rate.d)
}

/** The largest debt in cents that `sats` carries at max_ltv_percent. */
export function maxDebtOf(sats: bigint, c: ExactConfig): bigint {
  return divideDown(sats * c.rate.n * c.maxLtv.n, SATS * c.rate.d * c.maxLtv.d)
}

/** The fewest satoshis that carry `debt` at max_ltv_percent. */
export function neededSatsOf(debt: bigint, c: ExactConfig): bigint {
  return divideUp(debt * SATS * c.rate.d * c.maxLtv.d, c.maxLtv.n * c.rate.n)
}

/** The level row reached at `volume` cents. */
export function levelAt(volume: bigint, c: ExactConfig): ExactConfig['levels'][number] {
  return c.levels.filter((row) => row.min <= volume).at(-1) ?? c.levels[0]!
}

/** A reward: fee × reward_percent / 100, in cents. */
export function rewardOf(fee: bigint, percent: Fraction): bigint {
  return divideHalfUp(fee * percent.n, 100n * percent.d)
}
