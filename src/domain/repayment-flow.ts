import { SandboxError, flowConflict } from '../errors/sandbox-error.js'
import type { RepaymentFlowAction, RepaymentFlowInput } from '../schemas/repayment-flow.js'
import { creditWallet, debitWallet, replaceWhere } from './book-updates.js'
import { checkLoanChange, checkOperationChange } from './final-records.js'
import { createEvent } from './events.js'
import { readTransfer, requireConfirmations, stepOutOfOrder } from './flow-guards.js'
import { closeLoan, payInterest, repayPrincipal } from './loan-changes.js'
import { findOpenOperation, isOperationOpen, nextRepaymentAction, requireActiveLoan } from './loan-guards.js'
import { resolveRepaymentKind, startPayment } from './repayment-start.js'
import type { DomainContext, DomainResult, Loan, LoanBook, RepaymentOperation, RepaymentStatus } from './types.js'

/**
 * POST /api/sandbox/loans/{id}/repayment-flow: advances a repayment of an active loan one step
 * (spec 3.2). A step sent from the wrong status gives 409 FLOW_CONFLICT and changes nothing.
 */
export function applyRepaymentStep(book: LoanBook, loanId: string, input: RepaymentFlowInput, ctx: DomainContext): DomainResult {
  // The body's own fields first: a malformed step is 400 whatever state the loan is in.
  if (input.action !== 'start_payment' && input.operation_id === undefined) {
    throw new SandboxError('INVALID_REQUEST', 'operation_id is required after start_payment.', { field: 'operation_id', issue: 'is required' })
  }
  const transfer = input.action === 'confirm_usdt' ? readTransfer(input) : undefined
  const kind = input.action === 'start_payment' ? resolveRepaymentKind(input) : undefined
  const loan = requireActiveLoan(book, loanId)
  if (input.action === 'start_payment') return startPayment(book, loan, input, kind!, ctx)
  const op = requireOperation(book, loan, input.operation_id!)
  switch (input.action) {
    case 'confirm_usdt': {
      requireStatus(book, op, 'confirm_usdt', 'awaiting_payment')
      const txHash = requireConfirmations(transfer!, ctx.requiredConfirmations.USDT)
      const wallet = debitWallet(book.wallet, 'USDT', op.amount)
      return advance({ ...book, wallet }, { ...op, status: 'payment_confirmed', tx_hash: txHash }, ctx)
    }
    case 'run_kyt':
      requireStatus(book, op, 'run_kyt', 'payment_confirmed')
      return advance(book, { ...op, status: 'kyt_completed' }, ctx)
    case 'complete_settlement':
      requireStatus(book, op, 'complete_settlement', 'kyt_completed')
      return settle(book, loan, op, ctx)
    case 'complete_collateral_return':
      return returnCollateral(book, loan, op, ctx)
  }
}

/** The operation named by `operation_id` on this loan: 409 OPERATION_NOT_FOUND when unknown. */
function requireOperation(book: LoanBook, loan: Loan, operationId: string): RepaymentOperation {
  const op = book.repayments.find((o) => o.operation_id === operationId && o.loan_id === loan.id)
  if (!op) throw flowConflict('OPERATION_NOT_FOUND', `Repayment operation ${operationId} was not found on loan ${loan.id}.`, { operation_id: operationId, loan_id: loan.id })
  return op
}

/**
 * 409 STEP_OUT_OF_ORDER unless `op` is in `status`. When `op` is finished and another operation
 * is open on the loan, the answer points to that one: a new start_payment would be refused.
 */
function requireStatus(book: LoanBook, op: RepaymentOperation, action: RepaymentFlowAction, status: RepaymentStatus): void {
  if (op.status === status) return
  const open = isOperationOpen(op) ? undefined : findOpenOperation(book, op.loan_id)
  if (!open) throw stepOutOfOrder(action, op.status, nextRepaymentAction(op), { operation_id: op.operation_id })
  const next = nextRepaymentAction(open)
  throw stepOutOfOrder(
    action,
    op.status,
    next,
    { operation_id: op.operation_id, open_operation_id: open.operation_id },
    `Operation ${op.operation_id} is ${op.status}, not the open operation; the open operation is ${open.operation_id}, whose next action is ${next}.`,
  )
}

/** Stores the advanced operation and emits sandbox.repayment.updated. */
function advance(book: LoanBook, next: RepaymentOperation, ctx: DomainContext): DomainResult {
  const op = { ...next, updatedAt: ctx.now }
  return {
    book: { ...book, repayments: replaceWhere(book.repayments, 'operation_id', op, checkOperationChange) },
    events: [createEvent(ctx, 'sandbox.repayment.updated', op)],
  }
}

/** Step 4: applies the confirmed payment to the loan. A full repayment leaves the loan active, owing nothing, until step 5. */
function settle(book: LoanBook, loan: Loan, op: RepaymentOperation, ctx: DomainContext): DomainResult {
  const id = op.operation_id
  let next: Loan
  if (op.repayment_kind === 'interest') next = payInterest(loan, op.amount, ctx, true, id)
  else if (op.repayment_kind === 'partial_principal') next = repayPrincipal(loan, op.amount, ctx, id)
  else {
    const interestPaid = loan.interestDue > 0 ? payInterest(loan, loan.interestDue, ctx, false, id) : loan
    next = repayPrincipal(interestPaid, loan.debt, ctx, id)
  }
  const settled: RepaymentOperation = { ...op, status: 'settled', updatedAt: ctx.now }
  return {
    book: { ...book, loans: replaceWhere(book.loans, 'id', next, checkLoanChange), repayments: replaceWhere(book.repayments, 'operation_id', settled, checkOperationChange) },
    events: [createEvent(ctx, 'sandbox.repayment.settled', settled)],
  }
}

/** Step 5 (full repayment only): returns the collateral to the wallet and closes the loan. */
function returnCollateral(book: LoanBook, loan: Loan, op: RepaymentOperation, ctx: DomainContext): DomainResult {
  if (op.repayment_kind !== 'full_principal') {
    throw flowConflict('COLLATERAL_RETURN_NOT_APPLICABLE', `Collateral is returned only after a full repayment; ${op.operation_id} is ${op.repayment_kind}.`, {
      operation_id: op.operation_id,
      repayment_kind: op.repayment_kind,
    })
  }
  requireStatus(book, op, 'complete_collateral_return', 'settled')
  const closed = closeLoan(loan, ctx, op.operation_id)
  const returned: RepaymentOperation = { ...op, status: 'collateral_returned', updatedAt: ctx.now }
  return {
    book: {
      ...book,
      wallet: creditWallet(book.wallet, 'BTC', closed.returnedBtc),
      loans: replaceWhere(book.loans, 'id', closed.loan, checkLoanChange),
      repayments: replaceWhere(book.repayments, 'operation_id', returned, checkOperationChange),
    },
    events: [createEvent(ctx, 'sandbox.collateral.returned', closed.loan)],
  }
}
