import type { LoanStateView } from '../domain/loan-book.js'
import { stringifyListOnce, stringifyOnce } from '../storage/json-memo.js'

/**
 * The JSON text of a loan state answer, equal to JSON.stringify of it. Every loan, application
 * and repayment in it is an object of the key's book, whose text the session's saves make anyway
 * (stringifyOnce), so an answer costs the number of its objects rather than their size: a key with
 * 60 loans otherwise re-serializes ~60 KB on every POST and GET.
 */
export function stringifyLoanState(view: LoanStateView): string {
  const { wallet, activeLoans, loanHistory, draft, sandboxFlow } = view
  return `{"wallet":${JSON.stringify(wallet)},"activeLoans":${stringifyListOnce(activeLoans)},"loanHistory":${stringifyListOnce(loanHistory)},`
    + `"draft":${draft === null ? 'null' : stringifyOnce(draft)},"sandboxFlow":{"loanApplications":${stringifyListOnce(sandboxFlow.loanApplications)},`
    + `"repaymentOperations":${stringifyListOnce(sandboxFlow.repaymentOperations)}}}`
}
