import type { z } from 'zod'
import type { loanFlowSchema } from '../schemas/loan-flow.js'
import type { repaymentFlowSchema } from '../schemas/repayment-flow.js'

// The fields' own types come from the request schemas; which of them each action needs is what the
// server's domain checks (a missing one is a 400), written here so a typed call cannot forget one.
// Bodies the server refuses are still sendable through the client's `request`.
type LoanFields = Omit<z.input<typeof loanFlowSchema>, 'action'>
type RepaymentFields = Omit<z.input<typeof repaymentFlowSchema>, 'action'>
type Transfer<F extends { tx_hash?: unknown; confirmations?: unknown }> = Required<Pick<F, 'tx_hash' | 'confirmations'>>

/** Body of POST /loans/flow: each step with the fields it needs (spec 3.1). */
export type LoanFlowInput =
  | ({ action: 'start_collateral_transfer' } & Required<Pick<LoanFields, 'collateral_btc' | 'loan_amount'>> & Pick<LoanFields, 'loan_currency' | 'external_client_id' | 'client_reference'>)
  | ({ action: 'confirm_btc' } & Transfer<LoanFields> & Pick<LoanFields, 'application_id'>)
  | ({ action: 'run_kyt' | 'complete_payout' } & Pick<LoanFields, 'application_id'>)

type StartPayment = { action: 'start_payment'; amount?: RepaymentFields['amount'] }

/** Body of POST /loans/{id}/repayment-flow: each step with the fields it needs (spec 3.2, decisions.md "Repayment kinds"). */
export type RepaymentFlowInput =
  | (StartPayment & { repayment_kind: 'interest'; full_repayment?: false })
  | (StartPayment & { repayment_kind: 'partial_principal'; amount: number; full_repayment?: false })
  | (StartPayment & { repayment_kind: 'full_principal'; full_repayment?: boolean })
  | (StartPayment & { repayment_kind?: 'full_principal'; full_repayment: true })
  | ({ action: 'confirm_usdt' } & Transfer<RepaymentFields> & Required<Pick<RepaymentFields, 'operation_id'>>)
  | ({ action: 'run_kyt' | 'complete_settlement' | 'complete_collateral_return' } & Required<Pick<RepaymentFields, 'operation_id'>>)
