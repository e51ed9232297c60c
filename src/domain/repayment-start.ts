import { SandboxError } from '../errors/sandbox-error.js'
import { repaymentKinds, type RepaymentFlowInput } from '../schemas/repayment-flow.js'
import { assertWalletHolds } from './book-updates.js'
import { createEvent } from './events.js'
import { assertNoOpenOperation } from './loan-guards.js'
import { roundUsd } from './money.js'
import type { DomainContext, DomainResult, Loan, LoanBook, RepaymentKind, RepaymentOperation } from './types.js'
import { createSandboxWallet } from './wallets.js'

/** 400 INVALID_AMOUNT for a repayment parameter. */
function invalidRepayment(field: string, issue: string, extra: Record<string, unknown> = {}): SandboxError {
  return new SandboxError('INVALID_AMOUNT', `${field} ${issue}.`, { field, issue, ...extra })
}

/** The repayment kind a start_payment asks for; `full_repayment: true` means full_principal. */
export function resolveRepaymentKind(input: RepaymentFlowInput): RepaymentKind {
  const kind = input.repayment_kind
  if (input.full_repayment === true) {
    if (kind !== undefined && kind !== 'full_principal') throw invalidRepayment('repayment_kind', 'must be full_principal when full_repayment is true', { value: kind })
    return 'full_principal'
  }
  if (input.full_repayment === false && kind === 'full_principal') {
    throw invalidRepayment('full_repayment', 'must not be false when repayment_kind is full_principal')
  }
  if (kind === undefined) throw invalidRepayment('repayment_kind', 'is required (or send full_repayment: true)', { allowed: [...repaymentKinds] })
  if (kind === 'partial_principal' && input.amount === undefined) throw invalidRepayment('amount', 'is required for partial_principal')
  return kind
}

/** The USDT amount a repayment of `kind` pays on `loan`; a sent `amount` must agree with it. */
export function resolveRepaymentAmount(kind: RepaymentKind, loan: Loan, amount: number | undefined): number {
  if (kind === 'partial_principal') {
    if (amount === undefined) throw invalidRepayment('amount', 'is required for partial_principal')
    if (!(amount > 0) || roundUsd(amount) >= loan.debt) {
      throw invalidRepayment('amount', `must be greater than 0 and less than the debt (${loan.debt}); use full_principal to repay it all`, { value: amount, debt: loan.debt })
    }
    return roundUsd(amount)
  }
  const due = kind === 'interest' ? loan.interestDue : roundUsd(loan.debt + loan.interestDue)
  if (due <= 0) throw invalidRepayment('repayment_kind', 'has nothing to pay: no interest is due', { value: kind })
  if (amount !== undefined && roundUsd(amount) !== due) {
    throw invalidRepayment('amount', `must equal the ${kind === 'interest' ? 'interest due' : 'debt plus interest due'} (${due})`, { value: amount, expected: due })
  }
  return due
}

/**
 * Repayment step 1 (`kind` from resolveRepaymentKind): opens an operation with its wallets; the
 * loan is locked until it finishes.
 */
export function startPayment(book: LoanBook, loan: Loan, input: RepaymentFlowInput, kind: RepaymentKind, ctx: DomainContext): DomainResult {
  assertNoOpenOperation(book, loan.id, 'start_payment')
  const amount = resolveRepaymentAmount(kind, loan, input.amount)
  assertWalletHolds(book.wallet, 'USDT', amount)
  const id = ctx.newId('rop')
  // The return address matches the one the application showed, so the borrower sees one address.
  const returnOwner = loan.application_id ?? loan.id
  const op: RepaymentOperation = {
    operation_id: id,
    loan_id: loan.id,
    status: 'awaiting_payment',
    repayment_kind: kind,
    amount,
    currency: loan.currency,
    wallets: {
      repayment: createSandboxWallet(ctx, 'USDT', id, 'repayment'),
      collateralReturn: kind === 'full_principal' ? createSandboxWallet(ctx, 'BTC', returnOwner, 'collateralReturn') : null,
    },
    createdAt: ctx.now,
    updatedAt: ctx.now,
  }
  return {
    book: { ...book, repayments: [...book.repayments, op] },
    events: [createEvent(ctx, 'sandbox.repayment.updated', op)],
  }
}
