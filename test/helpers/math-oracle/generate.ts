/**
 * Random requests for the oracle walk, biased to the edges of the loan math: exactly at the
 * LTV maximum and one unit past it, limits and one unit outside, the whole wallet, half cents,
 * float-noise sums, too many decimals. Each comes with the oracle's prediction of its outcome.
 */

import type { Random } from '../../unit/property-random.js'
import { fromUnits, maxOf, toFraction } from './exact.js'
import { maxDebtOf } from './formulas.js'
import { findDraft, findOpenOp, type Amount, type Model, type Outcome } from './model.js'
import { maxRemovableOf, predictAction, type DirectAction } from './predict-actions.js'
import { predictCreateLoan, predictLoanFlow, type LoanFlowBody, type NewLoanBody } from './predict-loans.js'
import { predictRepayment, type RepaymentBody } from './predict-repay.js'

export interface OracleRequest {
  path: string
  body: Record<string, unknown>
  outcome: Outcome
}

/** A clean amount of `units` at `decimals`. */
function clean(units: bigint, decimals: number): Amount {
  return { send: fromUnits(units, decimals), meant: { n: units, d: 10n ** BigInt(decimals) } }
}

/** An amount near `units`: itself mostly, else one unit off, a half unit, a float-noise sum or junk. */
function around(random: Random, units: bigint, decimals: number): Amount {
  const roll = random.next()
  if (roll < 0.55) return clean(units, decimals)
  if (roll < 0.7) return clean(units + BigInt(random.pick([-1, 1])), decimals)
  if (roll < 0.8 && units > 1n) {
    // A float-noise sum a partner's client makes (19999.99 + 199.99), meaning the exact sum.
    const part = BigInt(random.int(1, Number(units < 1_000_000n ? units - 1n : 999_999n)))
    return { send: fromUnits(units - part, decimals) + fromUnits(part, decimals), meant: { n: units, d: 10n ** BigInt(decimals) } }
  }
  if (roll < 0.9) {
    const text = `${fromUnits(units, decimals).toFixed(decimals)}${random.int(1, 9)}`
    return { send: Number(text), meant: toFraction(Number(text)) }
  }
  return random.pick([{ send: 0, meant: null }, { send: -Math.abs(fromUnits(units, decimals)) || -1, meant: null }, { send: String(fromUnits(units, decimals)), meant: null }])
}

/** A random whole number of units in [min, max] (max >= min). */
function between(random: Random, min: bigint, max: bigint): bigint {
  if (max <= min) return min
  const span = max - min
  const pick = span > 1_000_000_000n ? BigInt(Math.floor(random.next() * Number(span))) : BigInt(random.int(0, Number(span)))
  return min + pick
}

/** A loan amount in cents: at the LTV maximum, at a limit, or in between, sometimes ending in half a cent of fee. */
function loanCents(random: Random, model: Model, collateral: bigint): bigint {
  const c = model.config
  const room = maxDebtOf(collateral, c)
  const top = room < c.loanMax ? room : c.loanMax
  const roll = random.next()
  if (roll < 0.3) return room
  if (roll < 0.4) return random.pick([c.loanMin, c.loanMax, c.loanMin - 1n, c.loanMax + 1n])
  const cents = between(random, c.loanMin, maxOf(c.loanMin, top))
  return random.chance(0.3) ? (cents / 100n) * 100n + 50n : cents
}

function newLoanBody(random: Random, model: Model): NewLoanBody {
  const c = model.config
  const roll = random.next()
  const wallet = model.btc < c.collateralMax ? model.btc : c.collateralMax
  const collateral = roll < 0.6 ? between(random, c.collateralMin, maxOf(c.collateralMin, wallet)) : random.pick([c.collateralMin, model.btc, model.btc + 1n, c.collateralMin - 1n, c.collateralMax, c.collateralMax + 1n])
  const clients = ['client_a', 'client_b', undefined, undefined]
  const external = random.pick(clients)
  const reference = random.pick(['ref_1', undefined, undefined])
  return {
    collateral: random.chance(0.9) ? clean(collateral, 8) : around(random, collateral, 8),
    amount: around(random, loanCents(random, model, collateral), 2),
    ...(random.chance(0.1) && { currency: random.pick(['USDT', 'EUR']) }),
    ...(external !== undefined && { external_client_id: external }),
    ...(reference !== undefined && { client_reference: reference }),
  }
}

/** The JSON body of a typed body: amounts become what is sent. */
function toJson(body: object): Record<string, unknown> {
  const json: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(body)) {
    if (field === 'collateral') json.collateral_btc = (value as Amount).send
    else if (field === 'amount') json[field] = (value as Amount).send
    else if (field === 'currency') json.loan_currency = value
    else json[field] = value
  }
  return json
}

function loanJson(body: NewLoanBody): Record<string, unknown> {
  const { amount, ...rest } = body
  return { ...toJson(rest), ...(amount && { loan_amount: amount.send }) }
}

function loanFlowRequest(random: Random, model: Model): OracleRequest {
  const draft = findDraft(model)
  const next = !draft ? 'start_collateral_transfer' : ({ awaiting_collateral: 'confirm_btc', collateral_confirmed: 'run_kyt', kyt_completed: 'complete_payout', completed: 'start_collateral_transfer' } as const)[draft.status]
  const action: LoanFlowBody['action'] = random.chance(0.85) ? next : random.pick(['start_collateral_transfer', 'confirm_btc', 'run_kyt', 'complete_payout'])
  const body: LoanFlowBody = action === 'start_collateral_transfer' ? { action, ...newLoanBody(random, model) } : { action }
  if (action === 'confirm_btc') Object.assign(body, { tx_hash: 'tx_btc', confirmations: random.pick([2, 2, 6, 1, 0]) })
  return { path: '/api/sandbox/loans/flow', body: { action, ...loanJson(body) }, outcome: predictLoanFlow(model, body) }
}

function createLoanRequest(random: Random, model: Model): OracleRequest {
  const body = newLoanBody(random, model)
  return { path: '/api/sandbox/loans', body: loanJson(body), outcome: predictCreateLoan(model, body) }
}

/** A loan id to act on: mostly an active loan, sometimes a closed or unknown one. */
function pickLoanId(random: Random, model: Model): string {
  const active = model.loans.filter((l) => l.status === 'active')
  if (active.length > 0 && random.chance(0.9)) return random.pick(active).id
  return model.loans.length > 0 && random.chance(0.7) ? random.pick(model.loans).id : 'loan_unknown'
}

function repaymentRequest(random: Random, model: Model): OracleRequest {
  const loanId = pickLoanId(random, model)
  const loan = model.loans.find((l) => l.id === loanId)
  const open = findOpenOp(model, loanId)
  let body: RepaymentBody
  if (open && random.chance(0.9)) {
    const next = ({ awaiting_payment: 'confirm_usdt', payment_confirmed: 'run_kyt', kyt_completed: 'complete_settlement', settled: 'complete_collateral_return' } as const)[open.status as 'awaiting_payment']
    body = { action: random.chance(0.9) ? next : random.pick(['confirm_usdt', 'run_kyt', 'complete_settlement', 'complete_collateral_return']), operation_id: open.id }
    if (body.action === 'confirm_usdt') Object.assign(body, { tx_hash: 'tx_usdt', confirmations: random.pick([6, 6, 12, 5]) })
  } else if (!open && model.ops.some((op) => op.loanId === loanId) && random.chance(0.1)) {
    body = { action: 'complete_collateral_return', operation_id: random.pick(model.ops.filter((op) => op.loanId === loanId)).id }
  } else {
    const kind = random.pick(['interest', 'partial_principal', 'partial_principal', 'full_principal', 'full_repayment'] as const)
    const debt = loan?.debt ?? 10_000n
    if (kind === 'full_repayment') body = { action: 'start_payment', full_repayment: true }
    else if (kind === 'partial_principal') body = { action: 'start_payment', repayment_kind: kind, amount: around(random, random.chance(0.3) ? debt - 1n : between(random, 1n, maxOf(1n, debt - 1n)), 2) }
    else body = { action: 'start_payment', repayment_kind: kind, ...(random.chance(0.2) && { amount: around(random, kind === 'interest' ? loan?.interestDue ?? 1n : debt + (loan?.interestDue ?? 0n), 2) }) }
  }
  return { path: `/api/sandbox/loans/${loanId}/repayment-flow`, body: toJson(body), outcome: predictRepayment(model, loanId, body) }
}

function actionRequest(random: Random, model: Model): OracleRequest {
  const loanId = pickLoanId(random, model)
  const loan = model.loans.find((l) => l.id === loanId)
  const action = random.pick(['repay_interest', 'repay_principal', 'add_collateral', 'remove_collateral', 'increase_loan'] as const satisfies readonly DirectAction[])
  const usdt = (units: bigint) => around(random, units, 2)
  const debt = loan?.debt ?? 1000n
  const amounts: Record<DirectAction, () => Amount> = {
    repay_interest: () => usdt(random.chance(0.6) ? loan?.interestDue ?? 100n : between(random, 1n, maxOf(1n, loan?.interestDue ?? 1n))),
    repay_principal: () => usdt(random.chance(0.4) ? debt : between(random, 1n, maxOf(1n, debt - 1n))),
    add_collateral: () => around(random, random.chance(0.3) ? model.config.collateralMax - (loan?.collateral ?? 0n) : between(random, 1n, maxOf(1n, model.btc)), 8),
    remove_collateral: () => around(random, loan && random.chance(0.6) ? maxRemovableOf(loan, model) : between(random, 1n, loan?.collateral ?? 1n), 8),
    increase_loan: () => usdt(loan && random.chance(0.6) ? maxDebtOf(loan.collateral, model.config) - loan.debt : between(random, 1n, 500_000n)),
  }
  const body = { action, amount: amounts[action]() }
  return { path: `/api/sandbox/loans/${loanId}/action`, body: toJson(body), outcome: predictAction(model, loanId, body) }
}

/** One random request of any kind, weighted so loans get issued, changed and repaid. */
export function generateRequest(random: Random, model: Model): OracleRequest {
  const roll = random.next()
  if (roll < 0.3 || model.loans.length === 0) return random.chance(0.75) ? loanFlowRequest(random, model) : createLoanRequest(random, model)
  if (roll < 0.65) return repaymentRequest(random, model)
  return actionRequest(random, model)
}
