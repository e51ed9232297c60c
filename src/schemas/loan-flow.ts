import { z } from 'zod'
import { btcAmount, confirmationsField, identifier, loanCurrencyField, partnerClientFields, txHashField, usdtAmount } from './fields.js'

/** The steps of the loan issuance flow, in order (spec 3.1). */
export const loanFlowActions = ['start_collateral_transfer', 'confirm_btc', 'run_kyt', 'complete_payout'] as const

/** Body of POST /api/sandbox/loans/flow. Which fields a step needs is checked by the domain. */
export const loanFlowSchema = z
  .object({
    action: z.enum(loanFlowActions).describe('The flow step to perform.'),
    collateral_btc: btcAmount('BTC collateral amount; required by start_collateral_transfer.').optional(),
    loan_amount: usdtAmount('Requested loan amount; required by start_collateral_transfer.').optional(),
    loan_currency: loanCurrencyField.describe('Loan currency (start_collateral_transfer); defaults to USDT.').optional(),
    // Taken at step 1; a later step with another value is refused (domain/draft-grouping.ts).
    external_client_id: partnerClientFields.external_client_id.describe("Partner's client identifier, used to group deals; taken at start_collateral_transfer. A later step may repeat it; another value is 400 INVALID_REQUEST."),
    client_reference: partnerClientFields.client_reference.describe('Partner reference, used to group deals; taken at start_collateral_transfer. A later step may repeat it; another value is 400 INVALID_REQUEST.'),
    tx_hash: txHashField.optional(),
    confirmations: confirmationsField.optional(),
    application_id: identifier('Application the step is meant for; when given it must be the open draft.').optional(),
  })
  .describe('One step of the loan issuance flow.')

/** A parsed loan flow request. */
export type LoanFlowInput = z.infer<typeof loanFlowSchema>

/** A loan flow action. */
export type LoanFlowAction = (typeof loanFlowActions)[number]
