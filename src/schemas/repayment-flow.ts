import { z } from 'zod'
import { confirmationsField, identifier, txHashField, usdtAmount } from './fields.js'

/** The steps of the repayment flow, in order (spec 3.2). */
export const repaymentFlowActions = ['start_payment', 'confirm_usdt', 'run_kyt', 'complete_settlement', 'complete_collateral_return'] as const

/** Kinds of repayment (decisions.md "Repayment kinds"). */
export const repaymentKinds = ['interest', 'partial_principal', 'full_principal'] as const

/** Body of POST /api/sandbox/loans/{id}/repayment-flow. Which fields a step needs is checked by the domain. */
export const repaymentFlowSchema = z
  .object({
    action: z.enum(repaymentFlowActions).describe('The repayment step to perform.'),
    repayment_kind: z.enum(repaymentKinds).describe('Kind of repayment (start_payment).').optional(),
    full_repayment: z.boolean().describe('true is the same as repayment_kind full_principal (start_payment).').optional(),
    amount: usdtAmount('USDT amount (start_payment): required for partial_principal; for interest and full_principal it may be sent and must equal what is due.').optional(),
    operation_id: identifier('Operation returned by start_payment; required on every later step.').optional(),
    tx_hash: txHashField.optional(),
    confirmations: confirmationsField.optional(),
  })
  .describe('One step of the repayment flow of a loan.')

/** A parsed repayment flow request. */
export type RepaymentFlowInput = z.infer<typeof repaymentFlowSchema>

/** A repayment flow action. */
export type RepaymentFlowAction = (typeof repaymentFlowActions)[number]
