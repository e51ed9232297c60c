import { isOperationOpen } from './loan-guards.js'
import type { Loan, LoanApplication, RepaymentOperation } from './types.js'

// What no step changes any more: final records of the book, and the history a loan already has.
// Stored idempotent answers refer to them by position instead of holding their text (see
// loan-state-json.ts), so this must stay true: `replaceWhere` runs the checks below.

/** A closed or liquidated loan: only active loans change (requireActiveLoan). */
export function isFinalLoan(loan: Loan): boolean {
  return loan.status !== 'active'
}

/** A completed application: only the open draft moves through the flow. */
export function isFinalApplication(app: LoanApplication): boolean {
  return app.status === 'completed'
}

/** A repayment operation with no step left (a settled interest or partial one, or a returned collateral). */
export function isFinalOperation(op: RepaymentOperation): boolean {
  return !isOperationOpen(op)
}

function refuse(what: string): never {
  throw new Error(`internal error: ${what} cannot change`)
}

/** Throws unless `next` may replace `loan`: a final loan never changes; a history only grows at its end. */
export function checkLoanChange(loan: Loan, next: Loan): void {
  if (isFinalLoan(loan)) refuse(`final loan ${loan.id}`)
  const kept = loan.history.length
  if (next.history.length < kept || (kept > 0 && next.history[kept - 1] !== loan.history[kept - 1])) refuse(`the history of loan ${loan.id}`)
}

/** Throws if `app` is final. */
export function checkApplicationChange(app: LoanApplication): void {
  if (isFinalApplication(app)) refuse(`final application ${app.id}`)
}

/** Throws if `op` is final. */
export function checkOperationChange(op: RepaymentOperation): void {
  if (isFinalOperation(op)) refuse(`final repayment operation ${op.operation_id}`)
}
