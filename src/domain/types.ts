/**
 * The per-key sandbox state and the objects the loan API returns. Field names follow
 * decisions.md: resource objects camelCase as the spec shows them, request/meta fields snake_case.
 */

import type { z } from 'zod'
import type { sandboxConfigSchema } from '../schemas/config.js'
import type {
  balancesSchema, loanApplicationSchema, loanHistoryEntrySchema, loanSchema, loanTermsSchema, repaymentOperationSchema, sandboxWalletSchema,
} from '../schemas/responses/loan-objects.js'
import type { eventTypeSchema } from '../schemas/responses/webhook-views.js'

// The objects the API answers with are inferred from the response schemas in src/schemas/responses/,
// the same schemas the OpenAPI document is generated from, so the two cannot drift.

/** Sandbox configuration, as GET /api/sandbox/config answers it (without request_id). */
export type SandboxConfig = z.infer<typeof sandboxConfigSchema>

/** The two assets a key's wallet holds: BTC collateral and USDT loans. */
export type Asset = 'BTC' | 'USDT'

/** The simulated borrower's balances. */
export type Balances = z.infer<typeof balancesSchema>

/** A sandbox wallet object (spec 2.3). */
export type SandboxWallet = z.infer<typeof sandboxWalletSchema>

/** Figures calculated for a new loan: what spec 3.1 step 1 calls "loan parameters calculated". */
export type LoanTerms = z.infer<typeof loanTermsSchema>

/** A loan application: the draft of the 4-step loan flow until its payout (decisions.md "Loan state"). */
export type LoanApplication = z.infer<typeof loanApplicationSchema>
/** `awaiting_collateral` -> `collateral_confirmed` -> `kyt_completed` -> `completed`. */
export type ApplicationStatus = LoanApplication['status']

/** One entry of a loan's `history`: `{ type, at, amount?, asset?, operation_id? }`. */
export type LoanHistoryEntry = z.infer<typeof loanHistoryEntrySchema>

/** A loan as the loan state shows it in `activeLoans` and `loanHistory`. */
export type Loan = z.infer<typeof loanSchema>
/** `active`, `closed` (repaid, collateral returned) or `liquidated` (reserved). */
export type LoanStatus = Loan['status']

/** A repayment operation of the 5-step repayment flow, named by its `operation_id`. */
export type RepaymentOperation = z.infer<typeof repaymentOperationSchema>
/** `interest`, `partial_principal` or `full_principal`. */
export type RepaymentKind = RepaymentOperation['repayment_kind']
/** `awaiting_payment` -> `payment_confirmed` -> `kyt_completed` -> `settled` -> `collateral_returned` (full repayment only). */
export type RepaymentStatus = RepaymentOperation['status']

/** A webhook event type, such as `sandbox.loan.issued` (spec 6.2). */
export type EventType = z.infer<typeof eventTypeSchema>

/** A webhook event body exactly as it will be delivered (decisions.md "Webhooks"). */
export interface SandboxEvent {
  id: string
  type: EventType
  created_at: string
  api_version: string
  data: { object: unknown }
}

/** The loan part of one key's state: everything the loan endpoints read and change. */
export interface LoanBook {
  wallet: Balances
  loans: Loan[]
  applications: LoanApplication[]
  repayments: RepaymentOperation[]
  draftId: string | null
}

/**
 * What the pure domain needs from the outside world: the time and fresh ids. Passing them in
 * keeps every domain function deterministic under test.
 */
export interface DomainContext {
  now: string
  newId: (prefix: string) => string
  /** Stable per-key seed for deterministic wallet addresses. */
  keySeed: string
  config: SandboxConfig
  requiredConfirmations: { BTC: number; USDT: number }
}

/** The outcome of one state-changing domain step. */
export interface DomainResult {
  book: LoanBook
  events: SandboxEvent[]
}
