import { z } from 'zod'

const positive = z.number().finite().positive()
const percent = z.number().finite().min(0).max(100)
const rubRates = z.object({ market: positive, payout: positive, loan: positive })
// Both figures named: a file that sets only `min` meets the default `max` it never wrote.
const range = z.object({ min: positive, max: positive }).refine((r) => r.min <= r.max, { error: (issue) => {
  const r = issue.input as { min: number; max: number }
  return `min ${r.min} is above max ${r.max}`
} })

/** The sandbox configuration (GET /api/sandbox/config, fixtures/config.json, `--config FILE`). */
export const sandboxConfigSchema = z.object({
  rates: z.object({
    btc_usd: positive.describe('USD price of 1 BTC.'),
    btc_rub: rubRates.describe('RUB price of 1 BTC: market, payout and loan/obligation rates.'),
    usd_rub: rubRates.describe('RUB per USD: market, payout and loan/obligation rates.'),
  }),
  borrow_rates: z.object({ fixed: percent.describe('Fixed annual loan rate, percent.') }),
  risk: z.object({
    // 0 would refuse every loan: a server that cannot issue one is a mistake, not a setting.
    max_ltv_percent: positive.max(100).describe('Highest LTV a loan may have after any change.'),
    liquidation_ltv_percent: percent.describe('LTV at which a loan would be liquidated.'),
    liquidation_penalty_percent: percent.describe('Penalty charged on liquidation.'),
  }),
  terms: z.object({
    interest_payment_months: z.number().int().positive().describe('Months per interest period.'),
    principal_payment_months: z.number().int().positive().describe('Loan term in months.'),
  }),
  fees: z.object({ loan_origination_percent: percent.describe('Fee kept from the payout, percent of the loan.') }),
  limits: z.object({
    collateral_btc: range.describe('Collateral bounds of a new loan, BTC.'),
    loan_amount: range.describe('Loan amount bounds of a new loan, USDT.'),
  }),
  currencies: z.array(z.string().min(1)).min(1).describe('Accepted loan currencies; the sandbox counts each 1:1 as USD (USD stablecoins), paid out and repaid in the wallet\'s USDT.'),
  api_version: z.string().describe('Partner API description version.'),
})
