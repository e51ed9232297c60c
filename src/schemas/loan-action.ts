import { z } from 'zod'
import { btcAmount } from './fields.js'

/** Direct actions on an active loan (decisions.md "Direct actions"). */
export const loanActions = ['repay_interest', 'repay_principal', 'add_collateral', 'remove_collateral', 'increase_loan'] as const

/** Body of POST /api/sandbox/loans/{id}/action. */
export const loanActionSchema = z
  .object({
    action: z.enum(loanActions).describe('The direct action to apply.'),
    // BTC precision here; the domain narrows it to cents for the USDT actions.
    amount: btcAmount('USDT for repay_interest, repay_principal and increase_loan (2 decimals); BTC for add_collateral and remove_collateral (8 decimals).'),
  })
  .describe('A direct action on an active loan.')

/** A parsed direct action request. */
export type LoanActionInput = z.infer<typeof loanActionSchema>

/** A direct action name. */
export type LoanAction = (typeof loanActions)[number]
