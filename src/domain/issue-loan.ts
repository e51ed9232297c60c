import { creditWallet } from './book-updates.js'
import { computeLoanTerms, computeLtv } from './loan-math.js'
import type { DomainContext, Loan, LoanBook, LoanTerms } from './types.js'

/** What a loan is issued from: an application's fields, or a direct create-loan body. */
export interface LoanIssue {
  collateral_btc: number
  loan_amount: number
  loan_currency: string
  external_client_id?: string | undefined
  client_reference?: string | undefined
  application_id?: string | undefined
}

/** Copies the optional partner fields that are set, so absent ones stay absent in JSON. */
export function pickPartnerFields(source: Pick<LoanIssue, 'external_client_id' | 'client_reference'>): Pick<Loan, 'external_client_id' | 'client_reference'> {
  return {
    ...(source.external_client_id !== undefined && { external_client_id: source.external_client_id }),
    ...(source.client_reference !== undefined && { client_reference: source.client_reference }),
  }
}

/**
 * Issues a loan into `book`: adds an active loan with its first period's interest due and pays
 * `loan_amount - fee` USDT into the wallet. The collateral must already have been taken from
 * the wallet by the caller (the flow does it at confirm_btc, a direct loan at creation).
 * `quote`, a draft's calculation, is what the client was shown: its fee, payout, interest and
 * rate stand even if a restart changed the config since; the LTV is at today's price.
 */
export function issueLoan(book: LoanBook, issue: LoanIssue, ctx: DomainContext, quote?: LoanTerms): { book: LoanBook; loan: Loan } {
  const terms = quote
    ? { ...quote, ltv: computeLtv(issue.loan_amount, issue.collateral_btc, ctx.config) }
    : computeLoanTerms(issue.collateral_btc, issue.loan_amount, ctx.config)
  const loan: Loan = {
    id: ctx.newId('loan'),
    status: 'active',
    currency: issue.loan_currency,
    principal: issue.loan_amount,
    debt: issue.loan_amount,
    collateral: issue.collateral_btc,
    ltv: terms.ltv,
    interestDue: terms.interestDue,
    interestRatePercent: terms.interestRatePercent,
    // A draft quoted before the period was recorded was quoted on the config of then; today's is the best left.
    interestPaymentMonths: terms.interestPaymentMonths ?? ctx.config.terms.interest_payment_months,
    originationFee: terms.originationFee,
    ...(issue.application_id !== undefined && { application_id: issue.application_id }),
    ...pickPartnerFields(issue),
    createdAt: ctx.now,
    updatedAt: ctx.now,
    history: [
      { type: 'collateral_deposited', at: ctx.now, amount: issue.collateral_btc, asset: 'BTC' },
      { type: 'issued', at: ctx.now, amount: issue.loan_amount, asset: 'USDT' },
      { type: 'origination_fee', at: ctx.now, amount: terms.originationFee, asset: 'USDT' },
    ],
  }
  return {
    book: { ...book, wallet: creditWallet(book.wallet, 'USDT', terms.payoutAmount), loans: [...book.loans, loan] },
    loan,
  }
}
