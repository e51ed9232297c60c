/**
 * The per-key sandbox state and the objects the loan API returns. Field names follow
 * decisions.md: resource objects camelCase as the spec shows them, request/meta fields snake_case.
 */

/** Sandbox configuration, as GET /api/sandbox/config answers it (without request_id). */
export interface SandboxConfig {
  rates: {
    btc_usd: number
    btc_rub: { market: number; payout: number; loan: number }
    usd_rub: { market: number; payout: number; loan: number }
  }
  borrow_rates: { fixed: number }
  risk: { max_ltv_percent: number; liquidation_ltv_percent: number; liquidation_penalty_percent: number }
  terms: { interest_payment_months: number; principal_payment_months: number }
  fees: { loan_origination_percent: number }
  limits: { collateral_btc: { min: number; max: number }; loan_amount: { min: number; max: number } }
  currencies: string[]
  api_version: string
}

export type Asset = 'BTC' | 'USDT'

/** The simulated borrower's balances. */
export interface Balances { BTC: number; USDT: number }

/** A sandbox wallet object (spec 2.3). */
export interface SandboxWallet {
  asset: Asset
  chainCode: 'sandbox'
  address: string
  requiredConfirmations: number
  isRealWallet: false
  confirmationMode: 'api_action'
}

/** Figures calculated for a new loan: what spec 3.1 step 1 calls "loan parameters calculated". */
export interface LoanTerms {
  collateralValueUsd: number
  ltv: number
  originationFee: number
  /** USDT the simulator wallet receives: loan amount minus the origination fee. */
  payoutAmount: number
  /** Interest of the first payment period. */
  interestDue: number
  interestRatePercent: number
}

export type ApplicationStatus = 'awaiting_collateral' | 'collateral_confirmed' | 'kyt_completed' | 'completed'

export interface LoanApplication {
  id: string
  status: ApplicationStatus
  collateral_btc: number
  loan_amount: number
  loan_currency: string
  external_client_id?: string
  client_reference?: string
  wallets: { collateralDeposit: SandboxWallet; loanPayout: SandboxWallet; collateralReturn: SandboxWallet }
  calculation: LoanTerms
  collateral_tx_hash?: string
  loan_id?: string
  createdAt: string
  updatedAt: string
}

export type LoanStatus = 'active' | 'closed' | 'liquidated'

export interface LoanHistoryEntry {
  type: string
  at: string
  amount?: number
  asset?: Asset
  operation_id?: string
}

export interface Loan {
  id: string
  status: LoanStatus
  currency: string
  principal: number
  debt: number
  collateral: number
  ltv: number
  interestDue: number
  interestRatePercent: number
  originationFee: number
  application_id?: string
  external_client_id?: string
  client_reference?: string
  createdAt: string
  updatedAt: string
  closedAt?: string
  history: LoanHistoryEntry[]
}

export type RepaymentKind = 'interest' | 'partial_principal' | 'full_principal'
export type RepaymentStatus = 'awaiting_payment' | 'payment_confirmed' | 'kyt_completed' | 'settled' | 'collateral_returned'

export interface RepaymentOperation {
  operation_id: string
  loan_id: string
  status: RepaymentStatus
  repayment_kind: RepaymentKind
  amount: number
  currency: string
  wallets: { repayment: SandboxWallet; collateralReturn: SandboxWallet | null }
  tx_hash?: string
  createdAt: string
  updatedAt: string
}

export type EventType =
  | 'sandbox.loan_application.updated'
  | 'sandbox.loan.issued'
  | 'sandbox.loan.updated'
  | 'sandbox.repayment.updated'
  | 'sandbox.repayment.settled'
  | 'sandbox.collateral.returned'
  | 'sandbox.partner.updated'
  | 'sandbox.webhook.test'

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
