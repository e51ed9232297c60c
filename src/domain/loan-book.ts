import type { z } from 'zod'
import type { loanStateSchema } from '../schemas/responses/loan-objects.js'
import type { Balances, LoanApplication, Loan, LoanBook, RepaymentOperation } from './types.js'

/** The loan state of decisions.md "Loan state", without the envelope fields. */
export type LoanStateView = z.infer<typeof loanStateSchema>

/** Creates the empty loan book of a new key, starting from `balances`. */
export function createLoanBook(balances: Balances): LoanBook {
  return { wallet: { BTC: balances.BTC, USDT: balances.USDT }, loans: [], applications: [], repayments: [], draftId: null }
}

/** The open draft application, or null. */
export function findDraft(book: LoanBook): LoanApplication | null {
  if (book.draftId === null) return null
  return book.applications.find((app) => app.id === book.draftId) ?? null
}

/**
 * The loan state a GET or POST answers with. It shares objects with `book` (books are never
 * mutated), so callers must treat it as read-only.
 */
export function viewLoanState(book: LoanBook): LoanStateView {
  return {
    wallet: { ...book.wallet },
    activeLoans: book.loans.filter((loan) => loan.status === 'active'),
    loanHistory: book.loans.filter((loan) => loan.status !== 'active'),
    draft: findDraft(book),
    sandboxFlow: { loanApplications: [...book.applications], repaymentOperations: [...book.repayments] },
  }
}
