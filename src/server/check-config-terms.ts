import { computeMaxDebt, computeMinCollateral } from '../domain/loan-math.js'
import type { SandboxConfig } from '../domain/types.js'
import { loadFixtures } from './fixtures.js'

/**
 * What is wrong across the fields of a config the schema accepted field by field: figures that
 * each look fine but together contradict the spec or leave no loan to issue. Empty when none.
 */
export function findConfigClashes(config: SandboxConfig, startingBtc = loadFixtures().wallet.balances.BTC): string[] {
  const clashes: string[] = []
  const { currencies, risk, limits, rates } = config
  // Spec 4.3: "USDT is an accepted value", and the request schema borrows in it when
  // loan_currency is left out: without it, such a request is refused for a currency it never sent.
  if (!currencies.includes('USDT')) {
    clashes.push('currencies: must include USDT (spec 4.3: USDT is an accepted loan_currency, and the one a request without loan_currency borrows in); list others beside it, as ["USDT","USDC"]')
  }
  const twice = currencies.filter((currency, index) => currencies.indexOf(currency) !== index)
  if (twice.length > 0) clashes.push(`currencies: lists ${[...new Set(twice)].join(', ')} twice`)
  // The first period's interest is due at issuance: a period past the term charges more than the loan runs.
  if (config.terms.interest_payment_months > config.terms.principal_payment_months) {
    clashes.push(`terms.interest_payment_months ${config.terms.interest_payment_months} is longer than terms.principal_payment_months ${config.terms.principal_payment_months}, the loan's term`)
  }
  if (risk.liquidation_ltv_percent < risk.max_ltv_percent) {
    clashes.push(`risk.liquidation_ltv_percent ${risk.liquidation_ltv_percent} is below risk.max_ltv_percent ${risk.max_ltv_percent}: a loan issued at the maximum LTV would be past its liquidation threshold`)
  }
  // Every new loan would be refused (400 INVALID_AMOUNT), which reads as a broken server, not a config.
  // A maximum past ~1e292 BTC has no whole number of satoshis to compute with; it carries any loan.
  const largest = Number.isFinite(limits.collateral_btc.max * 1e8) ? computeMaxDebt(limits.collateral_btc.max, config) : Number.POSITIVE_INFINITY
  if (largest < limits.loan_amount.min) {
    clashes.push(`no loan fits: the most collateral, limits.collateral_btc.max ${limits.collateral_btc.max} BTC at rates.btc_usd ${rates.btc_usd}, carries at most ${largest} USDT at risk.max_ltv_percent ${risk.max_ltv_percent}, below limits.loan_amount.min ${limits.loan_amount.min}`)
  } else {
    // Collateral comes from the key's simulated wallet, which only a returned loan refills: every
    // loan would be 409 INSUFFICIENT_BALANCE, on every key, with nothing the partner could do.
    const needed = computeMinCollateral(limits.loan_amount.min, config)
    if (limits.collateral_btc.min > startingBtc) {
      clashes.push(`no loan fits a new key's wallet: limits.collateral_btc.min ${limits.collateral_btc.min} BTC is more than the ${startingBtc} BTC every key's wallet starts with (fixtures/wallet.json)`)
    } else if (needed > startingBtc) {
      clashes.push(`no loan fits a new key's wallet: the smallest loan, limits.loan_amount.min ${limits.loan_amount.min} at risk.max_ltv_percent ${risk.max_ltv_percent} and rates.btc_usd ${rates.btc_usd}, needs ${needed} BTC of collateral, and every key's wallet starts with ${startingBtc} BTC (fixtures/wallet.json)`)
    }
  }
  return clashes
}
