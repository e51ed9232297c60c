/**
 * Invariants of one loan book that must hold after any sequence of steps, derived from the spec
 * and decisions.md (not from the code): money precision, balances that add up from the loans'
 * histories, non-negative figures, LTV by its formula, and the shape of the flows.
 */

import type { Balances, DomainContext, Loan, LoanBook, RepaymentOperation } from '../../src/domain/types.js'

/** Absolute slack for comparing sums of exact decimals held in binary floats. */
export const EPS = 1e-7

/** Throws `message` unless `ok`. */
export function check(ok: boolean, message: string): asserts ok {
  if (!ok) throw new Error(message)
}

/** Decimal places of `value` as JavaScript prints it: 0.30000000000000004 has 17. */
export function decimalsOf(value: number): number {
  const [mantissa = '', exponent = '0'] = String(Math.abs(value)).split('e')
  return Math.max(0, (mantissa.split('.')[1] ?? '').length - Number(exponent))
}

/** Equal within EPS. */
export function near(a: number, b: number): boolean {
  return Math.abs(a - b) < EPS
}

/** `value` is a figure rounded half-up from `raw` to `decimals` places (decisions: cents, satoshis, LTV 2 decimals). */
export function roundedFrom(value: number, raw: number, decimals: number): boolean {
  return decimalsOf(value) <= decimals && Math.abs(value - raw) <= 0.5 * 10 ** -decimals + EPS
}

/** Raw LTV percent by the decisions.md formula. */
export function rawLtv(debt: number, collateralBtc: number, ctx: DomainContext): number {
  return debt <= 0 ? 0 : (debt / (collateralBtc * ctx.config.rates.btc_usd)) * 100
}

/** Raw interest of one period on `debt` (decisions.md "Loan math"). */
export function rawPeriodInterest(debt: number, ctx: DomainContext): number {
  return ((debt * ctx.config.borrow_rates.fixed) / 100 / 12) * ctx.config.terms.interest_payment_months
}

/** Walks every number in `value`: finite and never -0 (JSON would print it as 0, a comparison as equal). */
function checkNumbers(value: unknown, path: string): void {
  if (typeof value === 'number') {
    check(Number.isFinite(value) && !Object.is(value, -0), `${path} is ${Object.is(value, -0) ? '-0' : value}`)
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => checkNumbers(item, `${path}[${index}]`))
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) checkNumbers(item, `${path}.${key}`)
  }
}

function checkAmount(value: number, decimals: number, path: string): void {
  check(value >= 0, `${path} is negative: ${value}`)
  check(decimalsOf(value) <= decimals, `${path} has more than ${decimals} decimals: ${value}`)
}

const USD = 2
const BTC = 8

/** Sums of one loan's history entries by type. */
function sumHistory(loan: Loan): Record<string, number> {
  const sums: Record<string, number> = {}
  for (const entry of loan.history) sums[entry.type] = (sums[entry.type] ?? 0) + (entry.amount ?? 0)
  return sums
}

const HISTORY_TYPES = new Set(['collateral_deposited', 'issued', 'origination_fee', 'interest_paid', 'principal_repaid', 'collateral_added', 'collateral_removed', 'loan_increased', 'collateral_returned'])

/** True while `op` has steps left (decisions.md: settled ends interest and partial ones). */
export function isOpen(op: RepaymentOperation): boolean {
  if (op.status === 'collateral_returned') return false
  return op.status !== 'settled' || op.repayment_kind === 'full_principal'
}

function checkLoan(loan: Loan, book: LoanBook, ctx: DomainContext): void {
  const at = `loan ${loan.id}`
  for (const field of ['debt', 'principal', 'interestDue', 'originationFee', 'ltv'] as const) checkAmount(loan[field], USD, `${at}.${field}`)
  checkAmount(loan.collateral, BTC, `${at}.collateral`)
  for (const [index, entry] of loan.history.entries()) {
    check(HISTORY_TYPES.has(entry.type), `${at}.history[${index}] has unknown type ${entry.type}`)
    if (entry.amount !== undefined) checkAmount(entry.amount, entry.asset === 'BTC' ? BTC : USD, `${at}.history[${index}].amount`)
  }
  const sums = sumHistory(loan)
  const borrowed = (sums.issued ?? 0) + (sums.loan_increased ?? 0)
  check(near(loan.principal, borrowed), `${at}.principal ${loan.principal} is not the sum borrowed in its history (${borrowed})`)
  check(near(loan.debt, borrowed - (sums.principal_repaid ?? 0)), `${at}.debt ${loan.debt} is not borrowed minus repaid in its history`)
  check(near(loan.originationFee, sums.origination_fee ?? 0), `${at}.originationFee ${loan.originationFee} is not the fees in its history`)
  const held = (sums.collateral_deposited ?? 0) + (sums.collateral_added ?? 0) - (sums.collateral_removed ?? 0) - (sums.collateral_returned ?? 0)
  check(near(loan.collateral, held), `${at}.collateral ${loan.collateral} is not what its history left (${held})`)
  const open = book.repayments.find((op) => op.loan_id === loan.id && isOpen(op))
  if (loan.status === 'closed') {
    check(loan.debt === 0 && loan.collateral === 0 && loan.interestDue === 0, `${at} is closed but owes or holds something`)
    check(loan.history.at(-1)?.type === 'collateral_returned', `${at} is closed without a collateral return last in its history`)
    check(open === undefined, `${at} is closed with operation ${open?.operation_id} open`)
    return
  }
  check(loan.status === 'active', `${at} has status ${loan.status}`)
  check(loan.collateral > 0, `${at} is active with no collateral`)
  const fullySettled = open?.repayment_kind === 'full_principal' && open.status === 'settled'
  check(fullySettled ? loan.debt === 0 && loan.interestDue === 0 : loan.debt > 0, `${at} is active with debt ${loan.debt} (full settlement pending: ${fullySettled})`)
  check(roundedFrom(loan.ltv, rawLtv(loan.debt, loan.collateral, ctx), 2), `${at}.ltv ${loan.ltv} is not debt/collateral value at ${ctx.config.rates.btc_usd} (${rawLtv(loan.debt, loan.collateral, ctx)})`)
  check(loan.interestDue <= rawPeriodInterest(loan.principal, ctx) + 0.01, `${at}.interestDue ${loan.interestDue} is more than a period on the principal`)
}

function checkApplications(book: LoanBook): void {
  const open = book.applications.filter((app) => app.status !== 'completed')
  check(open.length <= 1, `${open.length} applications are open`)
  check(book.draftId === (open[0]?.id ?? null), `draftId ${book.draftId} is not the open application ${open[0]?.id}`)
  for (const app of book.applications) {
    checkAmount(app.collateral_btc, BTC, `application ${app.id}.collateral_btc`)
    checkAmount(app.loan_amount, USD, `application ${app.id}.loan_amount`)
    for (const [field, value] of Object.entries(app.calculation)) checkAmount(value, USD, `application ${app.id}.calculation.${field}`)
    if (app.status === 'completed') {
      const loan = book.loans.find((l) => l.id === app.loan_id)
      check(loan?.application_id === app.id, `completed application ${app.id} has no loan`)
    }
  }
}

function checkOperations(book: LoanBook): void {
  const openLoans = new Set<string>()
  for (const op of book.repayments) {
    const at = `operation ${op.operation_id}`
    const loan = book.loans.find((l) => l.id === op.loan_id)
    check(loan !== undefined, `${at} has no loan`)
    check(op.amount > 0, `${at}.amount is ${op.amount}`)
    checkAmount(op.amount, USD, `${at}.amount`)
    check((op.wallets.collateralReturn === null) === (op.repayment_kind !== 'full_principal'), `${at} has a collateral return wallet iff it is full`)
    if (op.status === 'collateral_returned') check(op.repayment_kind === 'full_principal' && loan.status === 'closed', `${at} returned collateral of a ${op.repayment_kind} repayment`)
    if (op.status === 'settled' || op.status === 'collateral_returned') {
      const paid = loan.history.filter((h) => h.operation_id === op.operation_id && h.asset === 'USDT').reduce((sum, h) => sum + (h.amount ?? 0), 0)
      check(near(paid, op.amount), `${at} paid ${op.amount} but the loan's history records ${paid}`)
    }
    if (!isOpen(op)) continue
    check(!openLoans.has(op.loan_id), `loan ${op.loan_id} has two open operations`)
    openLoans.add(op.loan_id)
  }
}

/**
 * The wallet against what the loans' histories say moved (decisions.md "Loan state": transfer
 * debits BTC, payout credits USDT, repayments debit USDT, return credits BTC), plus what is in
 * flight: collateral confirmed on the open draft, USDT confirmed on an unsettled operation.
 */
function checkConservation(book: LoanBook, initial: Balances): void {
  let btc = initial.BTC
  let usdt = initial.USDT
  for (const loan of book.loans) {
    const sums = sumHistory(loan)
    btc -= (sums.collateral_deposited ?? 0) + (sums.collateral_added ?? 0) - (sums.collateral_removed ?? 0) - (sums.collateral_returned ?? 0)
    usdt += (sums.issued ?? 0) + (sums.loan_increased ?? 0) - (sums.origination_fee ?? 0) - (sums.interest_paid ?? 0) - (sums.principal_repaid ?? 0)
  }
  for (const app of book.applications) if (app.status === 'collateral_confirmed' || app.status === 'kyt_completed') btc -= app.collateral_btc
  for (const op of book.repayments) if (op.status === 'payment_confirmed' || op.status === 'kyt_completed') usdt -= op.amount
  check(near(book.wallet.BTC, btc), `wallet BTC ${book.wallet.BTC} is not ${btc}, what the loans and draft account for`)
  check(near(book.wallet.USDT, usdt), `wallet USDT ${book.wallet.USDT} is not ${usdt}, what the loans and operations account for`)
}

/** Checks every invariant of `book`; throws an Error naming the first one broken. */
export function checkBook(book: LoanBook, ctx: DomainContext, initial: Balances): void {
  checkNumbers(book, 'book')
  checkAmount(book.wallet.BTC, BTC, 'wallet.BTC')
  checkAmount(book.wallet.USDT, USD, 'wallet.USDT')
  for (const loan of book.loans) checkLoan(loan, book, ctx)
  check(new Set(book.loans.map((l) => l.id)).size === book.loans.length, 'loan ids repeat')
  checkApplications(book)
  checkOperations(book)
  checkConservation(book, initial)
}
