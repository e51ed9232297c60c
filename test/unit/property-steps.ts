/**
 * The steps of the domain property test: generated from the current book (so a sequence keeps
 * hitting live loans and operations) and run exactly as the server would, from a JSON body
 * through the request schema into the domain.
 */

import { createLoanDirect } from '../../src/domain/create-loan.js'
import { applyDirectAction } from '../../src/domain/direct-actions.js'
import { revalueActiveLoans } from '../../src/domain/loan-book.js'
import { applyLoanFlowStep } from '../../src/domain/loan-flow.js'
import { applyRepaymentStep } from '../../src/domain/repayment-flow.js'
import type { DomainContext, DomainResult, LoanBook } from '../../src/domain/types.js'
import { createLoanSchema } from '../../src/schemas/create-loan.js'
import { loanActions, loanActionSchema } from '../../src/schemas/loan-action.js'
import { loanFlowActions, loanFlowSchema } from '../../src/schemas/loan-flow.js'
import { parseBody } from '../../src/schemas/parse-body.js'
import { repaymentFlowActions, repaymentFlowSchema, repaymentKinds } from '../../src/schemas/repayment-flow.js'
import { randomBtc, randomUsdt, type Random } from './property-random.js'

/** One generated step; plain data, so a failing sequence prints as a replayable list. */
export type Step =
  | { kind: 'create'; body: Record<string, unknown> }
  | { kind: 'flow'; body: Record<string, unknown> }
  | { kind: 'repay'; loanId: string; body: Record<string, unknown> }
  | { kind: 'action'; loanId: string; body: Record<string, unknown> }
  | { kind: 'price'; btc_usd: number }

/** A loan or operation id that no book holds. */
const UNKNOWN = 'loan_unknown'

/** Largest debt `collateral` carries at the maximum LTV, in whole cents: the exact edge of increase_loan. */
function maxDebtAt(collateral: number, ctx: DomainContext): number {
  return Math.floor(collateral * ctx.config.rates.btc_usd * ctx.config.risk.max_ltv_percent) / 100
}

/** The figures of `book` an amount is likely to be tested against, limits and LTV edges included. */
function usdtHints(book: LoanBook, ctx: DomainContext): number[] {
  const { limits } = ctx.config
  const edges = book.loans.flatMap((l) => [l.debt, l.interestDue, l.debt + l.interestDue, l.principal, Math.round((maxDebtAt(l.collateral, ctx) - l.debt) * 100) / 100])
  return [book.wallet.USDT, limits.loan_amount.min, limits.loan_amount.max, ...edges]
}

/** Likewise in BTC; the LTV edge is the most collateral remove_collateral may take, in whole satoshis. */
function btcHints(book: LoanBook, ctx: DomainContext): number[] {
  const { limits, rates, risk } = ctx.config
  const removable = book.loans.map((l) => Math.floor((l.collateral - (l.debt * 100) / (risk.max_ltv_percent * rates.btc_usd)) * 1e8) / 1e8)
  return [book.wallet.BTC, limits.collateral_btc.min, limits.collateral_btc.max, ...book.loans.map((l) => l.collateral), ...removable]
}

/** A loan id to aim at: mostly an active loan, sometimes a closed or unknown one. */
function pickLoanId(random: Random, book: LoanBook): string {
  const active = book.loans.filter((l) => l.status === 'active')
  if (active.length > 0 && random.chance(0.85)) return random.pick(active).id
  if (book.loans.length > 0 && random.chance(0.7)) return random.pick(book.loans).id
  return UNKNOWN
}

/** Fields of a new loan; mostly sized to pass the limits and the LTV, often not. */
function newLoanFields(random: Random, book: LoanBook, ctx: DomainContext): Record<string, unknown> {
  const collateral = random.chance(0.6) ? random.pick([0.5, 0.25, 0.1, 1, 0.01, 0.001, 0.12345678]) : randomBtc(random, btcHints(book, ctx))
  const price = ctx.config.rates.btc_usd
  const maxLtvLoan = typeof collateral === 'number' ? Math.floor(collateral * price * ctx.config.risk.max_ltv_percent) / 100 : 20_000
  const amount = random.chance(0.5) ? random.pick([maxLtvLoan, maxLtvLoan + 0.01, maxLtvLoan / 2, 100, 20_000]) : randomUsdt(random, usdtHints(book, ctx))
  return {
    collateral_btc: collateral,
    loan_amount: amount,
    ...(random.chance(0.1) && { loan_currency: random.pick(['USDT', 'EUR']) }),
    ...(random.chance(0.3) && { external_client_id: random.pick(['client_a', 'client_b']) }),
    ...(random.chance(0.2) && { client_reference: 'ref_1' }),
  }
}

/** Confirmation fields: usually enough, sometimes too few or malformed. */
function transferFields(random: Random, required: number): Record<string, unknown> {
  const confirmations = random.pick([required, required, required + 3, required - 1, 0, -1, 2.5])
  return { tx_hash: random.chance(0.95) ? `tx_${random.int(1, 999)}` : '', confirmations }
}

function generateFlow(random: Random, book: LoanBook, ctx: DomainContext): Step {
  const draft = book.applications.find((a) => a.id === book.draftId)
  const inOrder = { awaiting_collateral: 'confirm_btc', collateral_confirmed: 'run_kyt', kyt_completed: 'complete_payout' } as const
  const action = draft && draft.status !== 'completed' && random.chance(0.7) ? inOrder[draft.status] : random.pick(loanFlowActions)
  const body: Record<string, unknown> = { action }
  if (action === 'start_collateral_transfer') Object.assign(body, newLoanFields(random, book, ctx))
  if (action === 'confirm_btc' || random.chance(0.05)) Object.assign(body, transferFields(random, ctx.requiredConfirmations.BTC))
  if (random.chance(0.1) && book.applications.length > 0) body.application_id = random.pick(book.applications).id
  if (random.chance(0.02)) body.application_id = 'app_unknown'
  return { kind: 'flow', body }
}

function generateRepayment(random: Random, book: LoanBook, ctx: DomainContext): Step {
  const loanId = pickLoanId(random, book)
  const ops = book.repayments.filter((op) => op.loan_id === loanId)
  const last = ops.at(-1)
  const next = { awaiting_payment: 'confirm_usdt', payment_confirmed: 'run_kyt', kyt_completed: 'complete_settlement', settled: 'complete_collateral_return' } as const
  const open = last && last.status !== 'collateral_returned' && !(last.status === 'settled' && last.repayment_kind !== 'full_principal')
  const action = open && random.chance(0.75) ? next[last.status as keyof typeof next] : random.chance(0.5) ? 'start_payment' : random.pick(repaymentFlowActions)
  const body: Record<string, unknown> = { action }
  if (action === 'start_payment') {
    const kind = random.pick([...repaymentKinds, undefined])
    if (kind !== undefined) body.repayment_kind = kind
    if (kind === undefined || kind === 'full_principal' ? random.chance(0.5) : random.chance(0.05)) body.full_repayment = random.chance(0.8)
    if (kind === 'partial_principal' ? random.chance(0.95) : random.chance(0.15)) body.amount = randomUsdt(random, usdtHints(book, ctx))
  } else if (random.chance(0.97)) {
    const opId = last && random.chance(0.85) ? last.operation_id : book.repayments.length > 0 && random.chance(0.7) ? random.pick(book.repayments).operation_id : 'rop_unknown'
    body.operation_id = opId
  }
  if (action === 'confirm_usdt' || random.chance(0.05)) Object.assign(body, transferFields(random, ctx.requiredConfirmations.USDT))
  return { kind: 'repay', loanId, body }
}

function generateAction(random: Random, book: LoanBook, ctx: DomainContext): Step {
  const loanId = pickLoanId(random, book)
  const action = random.pick(loanActions)
  const btc = action === 'add_collateral' || action === 'remove_collateral'
  const due = book.loans.find((l) => l.id === loanId)?.interestDue ?? 0
  // Interest is small beside the other hints: aim at it directly, or repay_interest rarely succeeds.
  if (action === 'repay_interest' && due > 0 && random.chance(0.5)) return { kind: 'action', loanId, body: { action, amount: random.pick([due, Math.max(0.01, Math.floor(due * 50) / 100)]) } }
  return { kind: 'action', loanId, body: { action, amount: btc ? randomBtc(random, btcHints(book, ctx)) : randomUsdt(random, usdtHints(book, ctx)) } }
}

/** The next step of a sequence, weighted toward the flows so loans get issued and repaid. */
export function generateStep(random: Random, book: LoanBook, ctx: DomainContext): Step {
  const roll = random.next()
  if (roll < 0.1) return { kind: 'create', body: newLoanFields(random, book, ctx) }
  if (roll < 0.4) return generateFlow(random, book, ctx)
  if (roll < 0.7) return generateRepayment(random, book, ctx)
  if (roll < 0.97) return generateAction(random, book, ctx)
  const price = random.pick([95_000, 60_000, 150_000, 47_500.5, 20_000, 123_456.78])
  return { kind: 'price', btc_usd: price }
}

/** The body as the server would see it: JSON text parsed back (NaN becomes null, -0 becomes 0). */
function overTheWire(body: Record<string, unknown>): unknown {
  return JSON.parse(JSON.stringify(body))
}

/**
 * Runs `step` on `book`. A price step is a server restarted with another `rates.btc_usd`: the
 * context's config changes and the session is revalued as session-store.ts does on load.
 */
export function runStep(book: LoanBook, step: Step, ctx: DomainContext): DomainResult {
  switch (step.kind) {
    case 'create':
      return createLoanDirect(book, parseBody(createLoanSchema, overTheWire(step.body)), ctx)
    case 'flow':
      return applyLoanFlowStep(book, parseBody(loanFlowSchema, overTheWire(step.body)), ctx)
    case 'repay':
      return applyRepaymentStep(book, step.loanId, parseBody(repaymentFlowSchema, overTheWire(step.body)), ctx)
    case 'action':
      return applyDirectAction(book, step.loanId, parseBody(loanActionSchema, overTheWire(step.body)), ctx)
    case 'price':
      ctx.config = { ...ctx.config, rates: { ...ctx.config.rates, btc_usd: step.btc_usd } }
      return { book: revalueActiveLoans(book, ctx.config), events: [] }
  }
}
