/**
 * The other half of the property test: steps that the spec and decisions.md allow must succeed,
 * so the domain cannot pass the invariants by refusing too much (at a limit, say). Only clearly
 * valid steps are judged; anything doubtful (float noise in an amount, for one) is left open.
 */

import type { DomainContext, LoanBook } from '../../src/domain/types.js'
import { decimalsOf, isOpen, rawLtv } from './property-book-invariants.js'
import type { Step } from './property-steps.js'

/** A clean amount: a finite number above 0 with at most `decimals` places as written. */
function isCleanAmount(value: unknown, decimals: number): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && decimalsOf(value) <= decimals
}

function isValidTransfer(body: Record<string, unknown>, required: number): boolean {
  const { tx_hash: txHash, confirmations } = body
  return typeof txHash === 'string' && txHash.length > 0 && Number.isInteger(confirmations) && (confirmations as number) >= required
}

/** A new loan request that is within the limits and the LTV and whose collateral the wallet holds. */
function isValidNewLoan(book: LoanBook, body: Record<string, unknown>, ctx: DomainContext): boolean {
  const { collateral_btc: collateral, loan_amount: amount, loan_currency: currency } = body
  const { limits, risk } = ctx.config
  if (!isCleanAmount(collateral, 8) || !isCleanAmount(amount, 2)) return false
  if (currency !== undefined && currency !== 'USDT') return false
  if (amount < limits.loan_amount.min || amount > limits.loan_amount.max) return false
  if (collateral < limits.collateral_btc.min || collateral > limits.collateral_btc.max) return false
  return rawLtv(amount, collateral, ctx) <= risk.max_ltv_percent && book.wallet.BTC >= collateral
}

function mustFlowSucceed(book: LoanBook, body: Record<string, unknown>, ctx: DomainContext): boolean {
  const draft = book.applications.find((a) => a.id === book.draftId)
  if (body.application_id !== undefined && body.application_id !== draft?.id) return false
  switch (body.action) {
    case 'start_collateral_transfer':
      return draft === undefined && isValidNewLoan(book, body, ctx)
    case 'confirm_btc':
      return draft?.status === 'awaiting_collateral' && isValidTransfer(body, ctx.requiredConfirmations.BTC) && book.wallet.BTC >= draft.collateral_btc
    case 'run_kyt':
      return draft?.status === 'collateral_confirmed'
    case 'complete_payout':
      return draft?.status === 'kyt_completed'
  }
  return false
}

function mustRepaymentSucceed(book: LoanBook, loanId: string, body: Record<string, unknown>, ctx: DomainContext): boolean {
  const loan = book.loans.find((l) => l.id === loanId)
  if (loan?.status !== 'active') return false
  const open = book.repayments.find((op) => op.loan_id === loanId && isOpen(op))
  if (body.action === 'start_payment') {
    if (open) return false
    const full = body.full_repayment === true
    const kind = full ? 'full_principal' : body.repayment_kind
    if (full && body.repayment_kind !== undefined && body.repayment_kind !== 'full_principal') return false
    if (body.full_repayment === false && kind === 'full_principal') return false
    if (kind === 'partial_principal') return isCleanAmount(body.amount, 2) && body.amount < loan.debt && book.wallet.USDT >= body.amount
    if (body.amount !== undefined) return false
    if (kind === 'interest') return loan.interestDue > 0 && book.wallet.USDT >= loan.interestDue
    return kind === 'full_principal' && book.wallet.USDT >= loan.debt + loan.interestDue
  }
  if (!open || body.operation_id !== open.operation_id) return false
  switch (body.action) {
    case 'confirm_usdt':
      return open.status === 'awaiting_payment' && isValidTransfer(body, ctx.requiredConfirmations.USDT) && book.wallet.USDT >= open.amount
    case 'run_kyt':
      return open.status === 'payment_confirmed'
    case 'complete_settlement':
      return open.status === 'kyt_completed'
    case 'complete_collateral_return':
      return open.status === 'settled'
  }
  return false
}

function mustActionSucceed(book: LoanBook, loanId: string, body: Record<string, unknown>, ctx: DomainContext): boolean {
  const loan = book.loans.find((l) => l.id === loanId)
  if (loan?.status !== 'active' || book.repayments.some((op) => op.loan_id === loanId && isOpen(op))) return false
  const { limits, risk } = ctx.config
  const btc = body.action === 'add_collateral' || body.action === 'remove_collateral'
  const amount = body.amount
  if (!isCleanAmount(amount, btc ? 8 : 2)) return false
  switch (body.action) {
    case 'repay_interest':
      return amount <= loan.interestDue && book.wallet.USDT >= amount
    case 'repay_principal':
      return amount < loan.debt ? book.wallet.USDT >= amount : amount === loan.debt && book.wallet.USDT >= loan.debt + loan.interestDue
    case 'add_collateral':
      return loan.collateral + amount <= limits.collateral_btc.max && book.wallet.BTC >= amount
    case 'remove_collateral':
      return amount < loan.collateral && rawLtv(loan.debt, loan.collateral - amount, ctx) <= risk.max_ltv_percent
    case 'increase_loan':
      return loan.debt + amount <= limits.loan_amount.max && rawLtv(loan.debt + amount, loan.collateral, ctx) <= risk.max_ltv_percent
  }
  return false
}

/** Transfer fields a step does not use may be sent, but must still be well-formed (the schema checks every field). */
function hasWellFormedExtras(body: Record<string, unknown>): boolean {
  const { tx_hash: txHash, confirmations } = body
  return (txHash === undefined || (typeof txHash === 'string' && txHash.length > 0)) && (confirmations === undefined || (Number.isInteger(confirmations) && (confirmations as number) >= 0))
}

/** True when `step` on `book` is clearly allowed, so a refusal is a bug. */
export function mustSucceed(book: LoanBook, step: Step, ctx: DomainContext): boolean {
  if ('body' in step && !hasWellFormedExtras(step.body)) return false
  switch (step.kind) {
    case 'price':
      return true
    case 'create':
      return isValidNewLoan(book, step.body, ctx)
    case 'flow':
      return mustFlowSucceed(book, step.body, ctx)
    case 'repay':
      return mustRepaymentSucceed(book, step.loanId, step.body, ctx)
    case 'action':
      return mustActionSucceed(book, step.loanId, step.body, ctx)
  }
}

/** Error codes each endpoint may answer with from the domain (spec part 4's status codes, decisions.md). */
const ALLOWED_CODES: Record<Exclude<Step['kind'], 'price'>, readonly string[]> = {
  create: ['INVALID_AMOUNT', 'INVALID_REQUEST', 'FLOW_CONFLICT'],
  flow: ['INVALID_ACTION', 'INVALID_AMOUNT', 'INVALID_REQUEST', 'LOAN_NOT_FOUND', 'FLOW_CONFLICT'],
  repay: ['INVALID_ACTION', 'INVALID_AMOUNT', 'INVALID_REQUEST', 'LOAN_NOT_FOUND', 'FLOW_CONFLICT'],
  action: ['INVALID_ACTION', 'INVALID_AMOUNT', 'INVALID_REQUEST', 'LOAN_NOT_FOUND', 'FLOW_CONFLICT'],
}

/** True when a refusal with `code` is one the step's endpoint may give. */
export function isAllowedRefusal(step: Step, code: string): boolean {
  return step.kind !== 'price' && ALLOWED_CODES[step.kind].includes(code)
}

