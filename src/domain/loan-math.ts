import { SandboxError } from '../errors/sandbox-error.js'
import { findClosestMatch } from '../text/closest-match.js'
import { Decimals, roundBtc, roundPercent, roundUsd, toExactFraction, toUnits } from './money.js'
import type { LoanTerms, SandboxConfig } from './types.js'

/** USD value of `collateralBtc` at the configured BTC/USD rate (unrounded). */
export function computeCollateralValue(collateralBtc: number, config: SandboxConfig): number {
  return collateralBtc * config.rates.btc_usd
}

/** LTV percent before display rounding; 0 when nothing is owed. */
function computeRawLtv(debt: number, collateralBtc: number, config: SandboxConfig): number {
  if (debt <= 0) return 0
  const value = computeCollateralValue(collateralBtc, config)
  return value > 0 ? (debt / value) * 100 : Number.POSITIVE_INFINITY
}

/** LTV percent (debt / collateral value * 100), rounded to 2 decimals. */
export function computeLtv(debt: number, collateralBtc: number, config: SandboxConfig): number {
  return roundPercent(computeRawLtv(debt, collateralBtc, config))
}

/**
 * The LTV to report when a change exceeds the maximum: the displayed LTV, or the next hundredth
 * above the maximum when display rounding would hide the excess (never "50 is above 50").
 */
export function computeExcessLtv(debt: number, collateralBtc: number, config: SandboxConfig): number {
  const ltv = computeLtv(debt, collateralBtc, config)
  const max = config.risk.max_ltv_percent
  return ltv > max ? ltv : roundPercent(max + 0.01)
}

/**
 * The two sides of "LTV at most the maximum" in whole units, so no float noise decides it either
 * way: LTV % = cents × 10^8 / (satoshis × btc_usd), at most max_ltv_percent exactly when
 * cents × 10^8 × rate.d × max.d <= max.n × rate.n × satoshis. A price with cents (95000.01) puts
 * a loan one cent over the limit only 5e-13 % above it, closer than any float tolerance.
 */
function scaleLtvSides(config: SandboxConfig): { perCent: bigint; perSatoshi: bigint } {
  // Made once per config (a server's is one object), not on every check of every write.
  let sides = ltvSides.get(config)
  if (sides) return sides
  const rate = toExactFraction(config.rates.btc_usd)
  const max = toExactFraction(config.risk.max_ltv_percent)
  sides = { perCent: 10n ** BigInt(Decimals.BTC) * rate.d * max.d, perSatoshi: max.n * rate.n }
  ltvSides.set(config, sides)
  return sides
}

const ltvSides = new WeakMap<SandboxConfig, { perCent: bigint; perSatoshi: bigint }>()

/** True when a loan of `debt` against `collateralBtc` would be above `risk.max_ltv_percent`. */
export function exceedsMaxLtv(debt: number, collateralBtc: number, config: SandboxConfig): boolean {
  if (debt <= 0) return false
  const { perCent, perSatoshi } = scaleLtvSides(config)
  return toUnits(debt, Decimals.USD) * perCent > toUnits(collateralBtc, Decimals.BTC) * perSatoshi
}

/** Largest debt `collateralBtc` can carry at the maximum LTV, in cents rounded down. */
export function computeMaxDebt(collateralBtc: number, config: SandboxConfig): number {
  const { perCent, perSatoshi } = scaleLtvSides(config)
  return roundUsd(Number((toUnits(collateralBtc, Decimals.BTC) * perSatoshi) / perCent) / 100)
}

/** Least collateral in satoshis that carries `debt` at the maximum LTV; none does at a maximum of 0 (null). */
function computeMinCollateralSats(debt: number, config: SandboxConfig): bigint | null {
  const { perCent, perSatoshi } = scaleLtvSides(config)
  if (perSatoshi === 0n) return null
  return (toUnits(debt, Decimals.USD) * perCent + perSatoshi - 1n) / perSatoshi
}

/** Least BTC that carries `debt` at the maximum LTV, rounded up to satoshis (Infinity at a maximum of 0). */
export function computeMinCollateral(debt: number, config: SandboxConfig): number {
  const sats = computeMinCollateralSats(debt, config)
  return sats === null ? Number.POSITIVE_INFINITY : Number(sats) / 10 ** Decimals.BTC
}

/** BTC that can leave `collateralBtc` while it still carries `debt` at the maximum LTV, rounded down to satoshis. */
export function computeMaxRemovable(debt: number, collateralBtc: number, config: SandboxConfig): number {
  if (debt <= 0) return collateralBtc
  const needed = computeMinCollateralSats(debt, config)
  const collateral = toUnits(collateralBtc, Decimals.BTC)
  return needed !== null && collateral > needed ? Number(collateral - needed) / 10 ** Decimals.BTC : 0
}

/** Origination fee kept from the payout of `loanAmount`. */
export function computeOriginationFee(loanAmount: number, config: SandboxConfig): number {
  return roundUsd((loanAmount * config.fees.loan_origination_percent) / 100)
}

/**
 * Interest due for one payment period on `debt`, at `ratePercent` a year over `months`: the
 * loan's own rate and period, fixed when it was issued (a restart with another
 * `borrow_rates.fixed` or `terms.interest_payment_months` applies to new loans).
 */
export function computePeriodInterest(debt: number, ratePercent: number, months: number): number {
  return roundUsd(((debt * ratePercent) / 100 / 12) * months)
}

/** Calculates the terms of a new loan (the calculator a partner shows before issuance). */
export function computeLoanTerms(collateralBtc: number, loanAmount: number, config: SandboxConfig): LoanTerms {
  const originationFee = computeOriginationFee(loanAmount, config)
  return {
    collateralValueUsd: roundUsd(computeCollateralValue(collateralBtc, config)),
    ltv: computeLtv(loanAmount, collateralBtc, config),
    originationFee,
    payoutAmount: roundUsd(loanAmount - originationFee),
    interestDue: computePeriodInterest(loanAmount, config.borrow_rates.fixed, config.terms.interest_payment_months),
    interestRatePercent: config.borrow_rates.fixed,
    interestPaymentMonths: config.terms.interest_payment_months,
  }
}

/** The request fields a new loan is checked on. */
export interface NewLoanRequest {
  collateral_btc: number
  loan_amount: number
  loan_currency: string
}

/**
 * `request` with its amounts at their precision. The request schema accepts float noise such as
 * 0.1 + 0.2 as the amount the client meant (money.ts), so it must be rounded before the loan
 * stores it or is checked against the limits.
 */
export function roundNewLoanRequest<T extends NewLoanRequest>(request: T): T {
  return { ...request, collateral_btc: roundBtc(request.collateral_btc), loan_amount: roundUsd(request.loan_amount) }
}

/**
 * Throws 400 INVALID_REQUEST for a currency the config does not list, and 400 INVALID_AMOUNT
 * naming the limit for an amount, collateral or LTV outside `limits` / `risk.max_ltv_percent`.
 */
export function assertNewLoanWithinLimits(request: NewLoanRequest, config: SandboxConfig): void {
  const { collateral_btc: collateral, loan_amount: amount, loan_currency: currency } = request
  if (!config.currencies.includes(currency)) {
    const meant = findClosestMatch(currency, config.currencies)
    throw new SandboxError('INVALID_REQUEST', `loan_currency ${currency} is not supported.${meant === undefined ? '' : ` Did you mean ${meant}?`}`, {
      field: 'loan_currency',
      issue: `must be one of: ${config.currencies.join(', ')}`,
      value: currency,
      allowed: [...config.currencies],
    })
  }
  const { loan_amount: loanLimits, collateral_btc: collateralLimits } = config.limits
  if (amount < loanLimits.min) throw limitError('loan_amount', 'limits.loan_amount.min', amount, loanLimits.min, 'at least')
  if (amount > loanLimits.max) throw limitError('loan_amount', 'limits.loan_amount.max', amount, loanLimits.max, 'at most')
  if (collateral < collateralLimits.min) throw limitError('collateral_btc', 'limits.collateral_btc.min', collateral, collateralLimits.min, 'at least')
  if (collateral > collateralLimits.max) throw limitError('collateral_btc', 'limits.collateral_btc.max', collateral, collateralLimits.max, 'at most')
  if (exceedsMaxLtv(amount, collateral, config)) {
    const ltv = computeExcessLtv(amount, collateral, config)
    const max = config.risk.max_ltv_percent
    const maxLoan = computeMaxDebt(collateral, config)
    const details = { field: 'loan_amount', limit: 'risk.max_ltv_percent', value: ltv, allowed: max, max_loan_amount: maxLoan }
    // A max_loan_amount below the minimum loan would only be refused in turn: more collateral is the way out.
    if (maxLoan < loanLimits.min) {
      const least = computeMinCollateral(loanLimits.min, config)
      throw new SandboxError('INVALID_AMOUNT', `LTV ${ltv}% is above the maximum of ${max}%. ${collateral} BTC carries at most ${maxLoan} USDT, less than the smallest loan (limits.loan_amount.min ${loanLimits.min}): post at least ${least} BTC.`, {
        ...details,
        min_collateral_btc: least,
      })
    }
    throw new SandboxError('INVALID_AMOUNT', `LTV ${ltv}% is above the maximum of ${max}%.`, details)
  }
}

/** A 400 INVALID_AMOUNT naming the config limit that `value` broke. */
export function limitError(field: string, limit: string, value: number, allowed: number, relation: 'at least' | 'at most'): SandboxError {
  return new SandboxError('INVALID_AMOUNT', `${field} must be ${relation} ${allowed} (${limit}).`, { field, limit, value, allowed })
}
