import { isOperationOpen } from './loan-guards.js'
import type { Loan, LoanApplication, RepaymentOperation } from './types.js'

// Records of the book that no step changes any more. Stored idempotent answers refer to them by
// position instead of holding their text (see stored-answer.ts), so this must stay true:
// `replaceWhere` refuses to replace one.

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
