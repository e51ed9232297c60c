import { SandboxError, flowConflict } from '../errors/sandbox-error.js'
import type { LoanActionInput } from '../schemas/loan-action.js'
import { creditWallet, debitWallet, replaceWhere } from './book-updates.js'
import { checkLoanChange } from './final-records.js'
import { createEvent } from './events.js'
import { changeCollateral, closeLoan, payInterest, recordChange, repayPrincipal } from './loan-changes.js'
import { assertNoOpenOperation, requireActiveLoan } from './loan-guards.js'
import { computeExcessLtv, computeMaxDebt, computeMaxRemovable, computeOriginationFee, exceedsMaxLtv } from './loan-math.js'
import { assetDecimals, hasAtMostDecimals, roundBtc, roundUsd } from './money.js'
import type { Asset, Balances, DomainContext, DomainResult, EventType, Loan, LoanBook } from './types.js'

/** What one direct action produced: the changed loan and wallet, and the events besides sandbox.loan.updated. */
interface ActionOutcome {
  loan: Loan
  wallet: Balances
  extraEvents?: EventType[]
}

/**
 * POST /api/sandbox/loans/{id}/action: changes an active loan at once (decisions.md "Direct
 * actions"). Emits sandbox.loan.updated, plus sandbox.collateral.returned when BTC goes back.
 */
export function applyDirectAction(book: LoanBook, loanId: string, input: LoanActionInput, ctx: DomainContext): DomainResult {
  // The body's own fields first (README: order of checks), so a 400 is never stored in place of it.
  const asset: Asset = input.action === 'add_collateral' || input.action === 'remove_collateral' ? 'BTC' : 'USDT'
  const amount = assertActionAmount(input.amount, asset)
  const loan = requireActiveLoan(book, loanId)
  assertNoOpenOperation(book, loan.id, input.action)
  const outcome = runAction(input.action, loan, amount, book.wallet, ctx)
  const events = [createEvent(ctx, 'sandbox.loan.updated', outcome.loan)]
  for (const type of outcome.extraEvents ?? []) events.push(createEvent(ctx, type, outcome.loan))
  return { book: { ...book, wallet: outcome.wallet, loans: replaceWhere(book.loans, 'id', outcome.loan, checkLoanChange) }, events }
}

/** The amount, if positive and no finer than the asset's unit; 400 INVALID_AMOUNT otherwise. */
function assertActionAmount(amount: number, asset: Asset): number {
  if (!(amount > 0)) throw invalidAmount('must be greater than 0', { value: amount })
  const decimals = assetDecimals(asset)
  if (!hasAtMostDecimals(amount, decimals)) throw invalidAmount(`must have at most ${decimals} decimal places for ${asset}`, { value: amount })
  return asset === 'BTC' ? roundBtc(amount) : roundUsd(amount)
}

/** A 400 INVALID_AMOUNT about the `amount` field. */
function invalidAmount(issue: string, extra: Record<string, unknown> = {}): SandboxError {
  return new SandboxError('INVALID_AMOUNT', `amount ${issue}.`, { field: 'amount', issue, ...extra })
}

/** A 409 LTV_LIMIT for a change that would leave the loan at `ltv`. */
function ltvLimit(ltv: number, ctx: DomainContext, extra: Record<string, unknown>): SandboxError {
  const max = ctx.config.risk.max_ltv_percent
  return flowConflict('LTV_LIMIT', `This change would raise LTV to ${ltv}%, above the maximum of ${max}%.`, { ltv, max, ...extra })
}

/** The 409 LTV_LIMIT for removing all the collateral of a loan that owes: its LTV would have no finite value to report. */
function noCollateralLeft(loan: Loan, ctx: DomainContext): SandboxError {
  const max = ctx.config.risk.max_ltv_percent
  return flowConflict('LTV_LIMIT', `This change would leave no collateral against a debt of ${loan.debt}, above the maximum LTV of ${max}%.`, {
    max,
    max_removable_btc: computeMaxRemovable(loan.debt, loan.collateral, ctx.config),
  })
}

/** Applies one direct action after the shared checks. */
function runAction(action: LoanActionInput['action'], loan: Loan, amount: number, wallet: Balances, ctx: DomainContext): ActionOutcome {
  switch (action) {
    case 'repay_interest':
      if (amount > loan.interestDue) throw invalidAmount(`must be at most the interest due (${loan.interestDue})`, { value: amount, allowed: loan.interestDue })
      return { wallet: debitWallet(wallet, 'USDT', amount), loan: payInterest(loan, amount, ctx, true) }
    case 'repay_principal':
      return repayPrincipalDirect(loan, amount, wallet, ctx)
    case 'add_collateral': {
      const total = roundBtc(loan.collateral + amount)
      const max = ctx.config.limits.collateral_btc.max
      if (total > max) {
        throw new SandboxError('INVALID_AMOUNT', `Collateral would be ${total} BTC, above limits.collateral_btc.max (${max}).`, {
          // `value` and `allowed` are totals; name the amount that may still be added.
          field: 'amount', limit: 'limits.collateral_btc.max', value: total, allowed: max, max_addable_btc: Math.max(0, roundBtc(max - loan.collateral)),
        })
      }
      return { wallet: debitWallet(wallet, 'BTC', amount), loan: changeCollateral(loan, amount, ctx) }
    }
    case 'remove_collateral': {
      // `allowed` is the field's range; all of it is still refused below, so name what may really go.
      if (amount > loan.collateral) {
        throw invalidAmount(`must be at most the collateral (${loan.collateral} BTC)`, {
          value: amount, allowed: loan.collateral, max_removable_btc: computeMaxRemovable(loan.debt, loan.collateral, ctx.config),
        })
      }
      const remaining = roundBtc(loan.collateral - amount)
      // All of it is the LTV rule's refusal too (decisions.md): no collateral left against a debt.
      if (remaining === 0 && loan.debt > 0) throw noCollateralLeft(loan, ctx)
      if (exceedsMaxLtv(loan.debt, remaining, ctx.config)) throw ltvLimit(computeExcessLtv(loan.debt, remaining, ctx.config), ctx, { max_removable_btc: computeMaxRemovable(loan.debt, loan.collateral, ctx.config) })
      return { wallet: creditWallet(wallet, 'BTC', amount), loan: changeCollateral(loan, -amount, ctx), extraEvents: ['sandbox.collateral.returned'] }
    }
    case 'increase_loan':
      return increaseLoan(loan, amount, wallet, ctx)
  }
}

/** Repays principal; repaying all of it also settles the interest due, closes the loan and returns the collateral. */
function repayPrincipalDirect(loan: Loan, amount: number, wallet: Balances, ctx: DomainContext): ActionOutcome {
  if (amount > loan.debt) throw invalidAmount(`must be at most the debt (${loan.debt})`, { value: amount, allowed: loan.debt })
  if (amount < loan.debt) return { wallet: debitWallet(wallet, 'USDT', amount), loan: repayPrincipal(loan, amount, ctx) }
  const paid = debitWallet(wallet, 'USDT', roundUsd(amount + loan.interestDue))
  const interestPaid = loan.interestDue > 0 ? payInterest(loan, loan.interestDue, ctx, false) : loan
  const closed = closeLoan(repayPrincipal(interestPaid, amount, ctx), ctx)
  return { wallet: creditWallet(paid, 'BTC', closed.returnedBtc), loan: closed.loan, extraEvents: ['sandbox.collateral.returned'] }
}

/** Borrows `amount` more against the same collateral; the origination fee is kept from it. */
function increaseLoan(loan: Loan, amount: number, wallet: Balances, ctx: DomainContext): ActionOutcome {
  const debt = roundUsd(loan.debt + amount)
  const max = ctx.config.limits.loan_amount.max
  if (debt > max) {
    throw new SandboxError('INVALID_AMOUNT', `Debt would be ${debt}, above limits.loan_amount.max (${max}).`, {
      field: 'amount', limit: 'limits.loan_amount.max', value: debt, allowed: max,
      // `allowed` bounds the debt, not the amount; name an increase that passes both this limit and the LTV.
      max_increase: Math.max(0, Math.min(roundUsd(max - loan.debt), computeMaxIncreaseByLtv(loan, ctx))),
    })
  }
  if (exceedsMaxLtv(debt, loan.collateral, ctx.config)) {
    throw ltvLimit(computeExcessLtv(debt, loan.collateral, ctx.config), ctx, { max_increase: computeMaxIncreaseByLtv(loan, ctx) })
  }
  const fee = computeOriginationFee(amount, ctx.config)
  const grown: Loan = { ...loan, debt, principal: roundUsd(loan.principal + amount), originationFee: roundUsd(loan.originationFee + fee) }
  const next = recordChange(recordChange(grown, ctx, { type: 'loan_increased', amount, asset: 'USDT' }), ctx, { type: 'origination_fee', amount: fee, asset: 'USDT' })
  return { wallet: creditWallet(wallet, 'USDT', roundUsd(amount - fee)), loan: next }
}

/** The most the loan may grow before its LTV passes `max_ltv_percent` (0 when it is already there). */
function computeMaxIncreaseByLtv(loan: Loan, ctx: DomainContext): number {
  return Math.max(0, roundUsd(computeMaxDebt(loan.collateral, ctx.config) - loan.debt))
}
