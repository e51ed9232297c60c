import { computeLtv, computePeriodInterest } from './loan-math.js'
import { roundBtc, roundUsd } from './money.js'
import type { DomainContext, Loan, LoanHistoryEntry } from './types.js'

/**
 * Pure changes to one loan, shared by the repayment flow and the direct actions. Each returns
 * a new loan with a history entry, `updatedAt` and a recomputed LTV.
 */

/** Appends `entry` (stamped now) and refreshes updatedAt and LTV. */
export function recordChange(loan: Loan, ctx: DomainContext, entry: Omit<LoanHistoryEntry, 'at'>, operationId?: string): Loan {
  const { type, ...rest } = entry
  const stamped: LoanHistoryEntry = { type, at: ctx.now, ...rest, ...(operationId !== undefined && { operation_id: operationId }) }
  return {
    ...loan,
    ltv: computeLtv(loan.debt, loan.collateral, ctx.config),
    updatedAt: ctx.now,
    history: [...loan.history, stamped],
  }
}

/**
 * Pays `amount` of the interest due. When the period's interest is paid off the next period's
 * interest becomes due at once (the sandbox compresses time), unless `rollOver` is false
 * (a full repayment ends the loan instead).
 */
export function payInterest(loan: Loan, amount: number, ctx: DomainContext, rollOver: boolean, operationId?: string): Loan {
  const left = roundUsd(loan.interestDue - amount)
  const interestDue = left > 0 ? left : rollOver ? computePeriodInterest(loan.debt, loan.interestRatePercent, loan.interestPaymentMonths ?? ctx.config.terms.interest_payment_months) : 0
  return recordChange({ ...loan, interestDue }, ctx, { type: 'interest_paid', amount, asset: 'USDT' }, operationId)
}

/** Repays `amount` of the principal debt. */
export function repayPrincipal(loan: Loan, amount: number, ctx: DomainContext, operationId?: string): Loan {
  return recordChange({ ...loan, debt: roundUsd(loan.debt - amount) }, ctx, { type: 'principal_repaid', amount, asset: 'USDT' }, operationId)
}

/** Closes a fully repaid loan and hands back all its collateral; returns the loan and the BTC returned. */
export function closeLoan(loan: Loan, ctx: DomainContext, operationId?: string): { loan: Loan; returnedBtc: number } {
  const returnedBtc = loan.collateral
  const closed = recordChange(
    { ...loan, status: 'closed', debt: 0, interestDue: 0, collateral: 0, closedAt: ctx.now },
    ctx,
    { type: 'collateral_returned', amount: returnedBtc, asset: 'BTC' },
    operationId,
  )
  return { loan: closed, returnedBtc }
}

/** Changes the collateral by `deltaBtc` (negative to remove). */
export function changeCollateral(loan: Loan, deltaBtc: number, ctx: DomainContext): Loan {
  const type = deltaBtc >= 0 ? 'collateral_added' : 'collateral_removed'
  return recordChange({ ...loan, collateral: roundBtc(loan.collateral + deltaBtc) }, ctx, { type, amount: Math.abs(deltaBtc), asset: 'BTC' })
}
