import { SandboxError, flowConflict } from '../errors/sandbox-error.js'
import type { RepaymentFlowAction } from '../schemas/repayment-flow.js'
import type { Loan, LoanBook, RepaymentOperation, RepaymentStatus } from './types.js'

/** The loan `loanId` if it exists and is active: 404 LOAN_NOT_FOUND, 409 LOAN_NOT_ACTIVE otherwise. */
export function requireActiveLoan(book: LoanBook, loanId: string): Loan {
  const loan = book.loans.find((l) => l.id === loanId)
  if (!loan) throw new SandboxError('LOAN_NOT_FOUND', `Loan ${loanId} was not found.`, { loan_id: loanId })
  if (loan.status !== 'active') {
    throw flowConflict('LOAN_NOT_ACTIVE', `Loan ${loanId} is ${loan.status}; only active loans can change.`, { loan_id: loanId, current_status: loan.status })
  }
  return loan
}

const NEXT_STEP: Record<RepaymentStatus, RepaymentFlowAction | null> = {
  awaiting_payment: 'confirm_usdt',
  payment_confirmed: 'run_kyt',
  kyt_completed: 'complete_settlement',
  settled: 'start_payment',
  collateral_returned: null,
}

/** The repayment action that advances `op`; after a settled interest or partial payment that is a new start_payment. */
export function nextRepaymentAction(op: RepaymentOperation): RepaymentFlowAction | null {
  if (op.status === 'settled' && op.repayment_kind === 'full_principal') return 'complete_collateral_return'
  return NEXT_STEP[op.status]
}

/** True while `op` still has steps to go (a settled full repayment still awaits its collateral return). */
export function isOperationOpen(op: RepaymentOperation): boolean {
  const next = nextRepaymentAction(op)
  return next !== null && next !== 'start_payment'
}

/** The open repayment operation of `loanId`, if any (there is at most one). */
export function findOpenOperation(book: LoanBook, loanId: string): RepaymentOperation | undefined {
  return book.repayments.find((op) => op.loan_id === loanId && isOperationOpen(op))
}

/**
 * 409 OPERATION_IN_PROGRESS when `loanId` has an open repayment operation: the loan is locked
 * until that operation finishes, so the flow and direct actions never race on one loan.
 */
export function assertNoOpenOperation(book: LoanBook, loanId: string, action: string): void {
  const open = findOpenOperation(book, loanId)
  if (!open) return
  throw flowConflict('OPERATION_IN_PROGRESS', `Repayment operation ${open.operation_id} on loan ${loanId} is still open; finish it before ${action}.`, {
    operation_id: open.operation_id,
    current_status: open.status,
    expected_action: nextRepaymentAction(open),
  })
}
