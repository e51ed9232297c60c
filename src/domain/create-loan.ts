import type { CreateLoanInput } from '../schemas/create-loan.js'
import { debitWallet } from './book-updates.js'
import { createEvent } from './events.js'
import { issueLoan } from './issue-loan.js'
import { assertNewLoanWithinLimits, roundNewLoanRequest } from './loan-math.js'
import type { DomainContext, DomainResult, LoanBook } from './types.js'

/**
 * POST /api/sandbox/loans: checks limits and the wallet's BTC, takes the collateral and issues
 * the loan at once. The flow's draft is left alone.
 */
export function createLoanDirect(book: LoanBook, input: CreateLoanInput, ctx: DomainContext): DomainResult {
  const request = roundNewLoanRequest({ ...input, loan_currency: input.loan_currency ?? 'USDT' })
  assertNewLoanWithinLimits(request, ctx.config)
  const wallet = debitWallet(book.wallet, 'BTC', request.collateral_btc)
  const issued = issueLoan({ ...book, wallet }, request, ctx)
  return { book: issued.book, events: [createEvent(ctx, 'sandbox.loan.issued', issued.loan)] }
}
