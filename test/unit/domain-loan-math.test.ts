import { describe, expect, it } from 'vitest'
import { assertNewLoanWithinLimits, computeLoanTerms, computeLtv, computeMaxDebt, computePeriodInterest } from '../../src/domain/loan-math.js'
import { expectError, fixtureConfig } from './domain-helpers.js'

const config = fixtureConfig

describe('loan math', () => {
  it('computes the terms of 0.5 BTC at 95000 for a 20000 loan', () => {
    expect(computeLoanTerms(0.5, 20000, config)).toEqual({
      collateralValueUsd: 47500,
      ltv: 42.11,
      originationFee: 200,
      payoutAmount: 19800,
      interestDue: 200,
      interestRatePercent: 12,
      interestPaymentMonths: 1,
    })
  })

  it('scales interest with the period length and LTV with the debt', () => {
    const quarterly = { ...config, terms: { ...config.terms, interest_payment_months: 3 } }
    expect(computePeriodInterest(15000, 12, config.terms.interest_payment_months)).toBe(150)
    expect(computePeriodInterest(15000, 12, quarterly.terms.interest_payment_months)).toBe(450)
    expect(computeLtv(15000, 0.5, config)).toBe(31.58)
    expect(computeLtv(0, 0, config)).toBe(0)
  })

  it('finds the largest loan the collateral carries', () => {
    expect(computeMaxDebt(0.5, config)).toBe(23750)
    expect(computeMaxDebt(0.3, config)).toBe(14250)
    // 586.419325 is rounded down: 586.42 would be above the maximum LTV.
    expect(computeMaxDebt(0.01234567, config)).toBe(586.41)
    // 0.002168 × 95000 × 50% is 102.98 exactly, which floats compute as 102.97999999999998.
    expect(computeMaxDebt(0.002168, config)).toBe(102.98)
  })
})

describe('assertNewLoanWithinLimits', () => {
  const ok = { collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' }

  it('accepts a loan exactly at the maximum LTV', () => {
    expect(() => assertNewLoanWithinLimits({ ...ok, loan_amount: 23750 }, config)).not.toThrow()
    expect(() => assertNewLoanWithinLimits({ collateral_btc: 0.3, loan_amount: 14250, loan_currency: 'USDT' }, config)).not.toThrow()
    // The largest loan an LTV error names must itself pass, though floats put this one at 50.000000000000014%.
    expect(() => assertNewLoanWithinLimits({ collateral_btc: 0.002168, loan_amount: 102.98, loan_currency: 'USDT' }, config)).not.toThrow()
  })

  it('rejects a loan one cent above the maximum LTV, however little above it that cent is', () => {
    // At 95,000.01 USD/BTC, 0.09499999 BTC carries at most 4,512.4995 USD at 50 %: 4,512.49 is the
    // largest loan, and 4,512.50 is above the maximum by 5.5e-13 % (decisions.md "Loan math": at most).
    const cents = { ...config, rates: { ...config.rates, btc_usd: 95000.01 } }
    const request = { collateral_btc: 0.09499999, loan_amount: 4512.5, loan_currency: 'USDT' }
    expect(computeMaxDebt(0.09499999, cents)).toBe(4512.49)
    expect(() => assertNewLoanWithinLimits({ ...request, loan_amount: 4512.49 }, cents)).not.toThrow()
    const error = expectError(() => assertNewLoanWithinLimits(request, cents), 'INVALID_AMOUNT')
    expect(error.details).toMatchObject({ limit: 'risk.max_ltv_percent', value: 50.01, max_loan_amount: 4512.49 })
  })

  it('accepts amounts and collateral exactly at their limits', () => {
    expect(() => assertNewLoanWithinLimits({ ...ok, loan_amount: 100 }, config)).not.toThrow()
    expect(() => assertNewLoanWithinLimits({ collateral_btc: 100, loan_amount: 1000000, loan_currency: 'USDT' }, config)).not.toThrow()
  })

  it('rejects an LTV above the maximum, naming the limit and the largest loan allowed', () => {
    const error = expectError(() => assertNewLoanWithinLimits({ ...ok, loan_amount: 23750.01 }, config), 'INVALID_AMOUNT')
    expect(error.status).toBe(400)
    expect(error.details).toEqual({ field: 'loan_amount', limit: 'risk.max_ltv_percent', value: 50.01, allowed: 50, max_loan_amount: 23750 })
  })

  it('says when the collateral carries less than the smallest loan, and how much collateral that loan needs, rather than only a max_loan_amount the minimum refuses', () => {
    // 0.001 BTC (the least collateral) at 95,000 carries 47.50 at 50 %: a loan of 47.50 is below the 100 minimum.
    const error = expectError(() => assertNewLoanWithinLimits({ collateral_btc: 0.001, loan_amount: 100, loan_currency: 'USDT' }, config), 'INVALID_AMOUNT')
    expect(error.message).toBe('LTV 105.26% is above the maximum of 50%. 0.001 BTC carries at most 47.5 USDT, less than the smallest loan (limits.loan_amount.min 100): post at least 0.00210527 BTC.')
    expect(error.details).toEqual({ field: 'loan_amount', limit: 'risk.max_ltv_percent', value: 105.26, allowed: 50, max_loan_amount: 47.5, min_collateral_btc: 0.00210527 })
    expect(() => assertNewLoanWithinLimits({ collateral_btc: 0.00210527, loan_amount: 100, loan_currency: 'USDT' }, config)).not.toThrow()
  })

  it.each([
    [{ loan_amount: 99.99 }, 'loan_amount', 'limits.loan_amount.min', 99.99, 100],
    [{ loan_amount: 1000000.01, collateral_btc: 100 }, 'loan_amount', 'limits.loan_amount.max', 1000000.01, 1000000],
    [{ collateral_btc: 0.0009, loan_amount: 100 }, 'collateral_btc', 'limits.collateral_btc.min', 0.0009, 0.001],
    [{ collateral_btc: 100.5 }, 'collateral_btc', 'limits.collateral_btc.max', 100.5, 100],
  ])('rejects %o with details naming %s %s', (change, field, limit, value, allowed) => {
    const error = expectError(() => assertNewLoanWithinLimits({ ...ok, ...change }, config), 'INVALID_AMOUNT')
    expect(error.details).toEqual({ field, limit, value, allowed })
  })

  it('rejects a currency the config does not list as INVALID_REQUEST', () => {
    const error = expectError(() => assertNewLoanWithinLimits({ ...ok, loan_currency: 'EUR' }, config), 'INVALID_REQUEST')
    expect(error.details).toMatchObject({ field: 'loan_currency', value: 'EUR', allowed: ['USDT'] })
  })
})
