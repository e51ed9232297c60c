import { z } from 'zod'
import { btcAmount, loanCurrencyField, partnerClientFields, usdtAmount } from './fields.js'

/** Body of POST /api/sandbox/loans (a loan created directly, without the step flow). */
export const createLoanSchema = z
  .object({
    collateral_btc: btcAmount('BTC collateral amount, debited from the simulator wallet.'),
    loan_amount: usdtAmount('Loan amount; the wallet receives it minus the origination fee.'),
    loan_currency: loanCurrencyField.default('USDT').describe('Loan currency; one of the config currencies.'),
    ...partnerClientFields,
  })
  .describe('A loan to create directly.')

/** A parsed direct loan request. */
export type CreateLoanInput = z.infer<typeof createLoanSchema>
