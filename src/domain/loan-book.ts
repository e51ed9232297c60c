import type { z } from 'zod'
import type { loanStateSchema } from '../schemas/responses/loan-objects.js'
import { computeLtv } from './loan-math.js'
import type { Balances, LoanApplication, LoanBook, SandboxConfig } from './types.js'

/** The loan state of decisions.md "Loan state", without the envelope fields. */
export type LoanStateView = z.infer<typeof loanStateSchema>

/** Creates the empty loan book of a new key, starting from `balances`. */
export function createLoanBook(balances: Balances): LoanBook {
  return { wallet: { BTC: balances.BTC, USDT: balances.USDT }, loans: [], applications: [], repayments: [], draftId: null }
}

/**
 * The book with its active loans' LTV at `config`'s BTC price: a server restarted with another
 * `rates.btc_usd` (how a partner simulates a price move) shows every loan at that price, not at
 * the price of its last change. Closed loans keep the LTV they closed with. Returns `book` itself
 * when nothing changes.
 */
export function revalueActiveLoans(book: LoanBook, config: SandboxConfig): LoanBook {
  let changed = false
  const loans = book.loans.map((loan) => {
    if (loan.status !== 'active') return loan
    const ltv = computeLtv(loan.debt, loan.collateral, config)
    if (ltv === loan.ltv) return loan
    changed = true
    return { ...loan, ltv }
  })
  return changed ? { ...book, loans } : book
}

/**
 * The time to stamp the next change of `book` with: `now`, or one millisecond after the book's
 * latest stamp when `now` is not later (two changes in one millisecond, or a host clock set
 * back). Stamps then follow the order of the changes, which the partner's rewards are accrued in
 * (partner.ts): with ties, an increase could be counted before a loan issued ahead of it.
 */
export function stampAfterBook(book: LoanBook, now: string): string {
  let latest = ''
  for (const list of [book.loans, book.applications, book.repayments]) {
    for (const item of list) if (item.updatedAt > latest) latest = item.updatedAt
  }
  return now > latest ? now : new Date(Date.parse(latest) + 1).toISOString()
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
