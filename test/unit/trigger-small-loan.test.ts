import { describe, expect, it } from 'vitest'
import { assertNewLoanWithinLimits } from '../../src/domain/loan-math.js'
import { loadFixtures } from '../../src/server/fixtures.js'
import { chooseSmallLoan } from '../../src/webhook-tools/trigger-walks.js'

const { config } = loadFixtures()
const ltvOf = (loan: { collateral_btc: number; loan_amount: number }, btcUsd: number) => loan.loan_amount / (loan.collateral_btc * btcUsd) * 100

describe('chooseSmallLoan', () => {
  it('takes the smallest loan amount with collateral for half the LTV limit, in whole satoshis', () => {
    const loan = chooseSmallLoan(config)
    expect(loan).toEqual({ loan_amount: 100, collateral_btc: 0.00421053, loan_currency: 'USDT' })
    expect(ltvOf(loan, config.rates.btc_usd)).toBeLessThanOrEqual(config.risk.max_ltv_percent / 2)
  })

  it('stays within the collateral limits of any config', () => {
    const cheapBtc = { ...config, rates: { ...config.rates, btc_usd: 1_000_000 } }
    expect(chooseSmallLoan(cheapBtc).collateral_btc).toBe(config.limits.collateral_btc.min)
    const tightMax = { ...config, limits: { ...config.limits, collateral_btc: { min: 0.001, max: 0.003 } } }
    expect(chooseSmallLoan(tightMax).collateral_btc).toBe(0.003)
    const odd = { ...config, rates: { ...config.rates, btc_usd: 70_123.45 }, risk: { ...config.risk, max_ltv_percent: 65 }, limits: { ...config.limits, loan_amount: { min: 250, max: 1e6 } } }
    const loan = chooseSmallLoan(odd)
    expect(Math.abs(loan.collateral_btc * 1e8 - Math.round(loan.collateral_btc * 1e8))).toBeLessThan(1e-6)
    expect(ltvOf(loan, 70_123.45)).toBeLessThanOrEqual(32.5)
  })

  it('fits the wallet, less a reserve, but never below the collateral the LTV limit needs', () => {
    // 12,000 USDT at 40% and 30,000 USD/BTC needs exactly 1 BTC.
    const big = { ...config, rates: { ...config.rates, btc_usd: 30_000 }, risk: { ...config.risk, max_ltv_percent: 40 }, limits: { loan_amount: { min: 12_000, max: 50_000 }, collateral_btc: { min: 0.5, max: 3 } } }
    expect(chooseSmallLoan(big).collateral_btc).toBe(2)
    expect(chooseSmallLoan(big, 1.7).collateral_btc).toBe(1.7)
    expect(chooseSmallLoan(big, 2, 0.5).collateral_btc).toBe(1.5)
    expect(chooseSmallLoan(big, 0.4).collateral_btc).toBe(1)
    expect(chooseSmallLoan(config, 2)).toEqual({ loan_amount: 100, collateral_btc: 0.00421053, loan_currency: 'USDT' })
  })

  it('asks a wallet too small for the loan for the collateral the server accepts, to the last satoshi', () => {
    // At 95,247.62 USD/BTC, 100 USDT at 50 % needs 209,979.0000002 satoshis: 0.00209980 BTC, not 0.00209979.
    const cents = { ...config, rates: { ...config.rates, btc_usd: 95_247.62 } }
    const loan = chooseSmallLoan(cents, 0.002)
    expect(loan.collateral_btc).toBe(0.0020998)
    expect(() => assertNewLoanWithinLimits(loan, cents)).not.toThrow()
  })

  it('borrows in USDT, or in the config\'s first currency when it does not list USDT', () => {
    expect(chooseSmallLoan({ ...config, currencies: ['USDC', 'USDT'] }).loan_currency).toBe('USDT')
    expect(chooseSmallLoan({ ...config, currencies: ['USDC'] }).loan_currency).toBe('USDC')
  })
})
