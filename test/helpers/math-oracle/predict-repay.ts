/**
 * What spec 3.2 / 4.6 and decisions.md "Repayment kinds" say a repayment-flow step does, with
 * the README's order of checks (body, loan, open operation, amounts, balance).
 */

import { periodInterestOf } from './formulas.js'
import { conflict, findLoan, findOpenOp, pickLoan, pickOp, refuse, unitsOf, type Amount, type Model, type ModelLoan, type ModelOp, type Outcome, type RepaymentKind } from './model.js'

export interface RepaymentBody {
  action: 'start_payment' | 'confirm_usdt' | 'run_kyt' | 'complete_settlement' | 'complete_collateral_return'
  repayment_kind?: RepaymentKind
  full_repayment?: boolean
  amount?: Amount
  operation_id?: string
  tx_hash?: string
  confirmations?: number
}

/** The loan `id` if active, or the 404 / 409 the spec gives. */
export function requireActive(model: Model, id: string): ModelLoan | Outcome {
  const loan = findLoan(model, id)
  if (!loan) return refuse(404, 'LOAN_NOT_FOUND')
  if (loan.status !== 'active') return conflict('LOAN_NOT_ACTIVE')
  return loan
}

/** Pays `amount` of the interest due; paid off, the next period's interest on the current debt is due. */
export function payInterest(loan: ModelLoan, amount: bigint, model: Model, rollOver: boolean): void {
  const left = loan.interestDue - amount
  loan.interestDue = left > 0n ? left : rollOver ? periodInterestOf(loan.debt, model.config) : 0n
  loan.history.push({ type: 'interest_paid', amount, asset: 'USDT' })
}

/** Closes a loan whose debt is paid: its collateral goes back to the wallet. */
export function closeLoan(loan: ModelLoan, model: Model): void {
  model.btc += loan.collateral
  loan.history.push({ type: 'collateral_returned', amount: loan.collateral, asset: 'BTC' })
  Object.assign(loan, { status: 'closed', debt: 0n, interestDue: 0n, collateral: 0n })
}

function startPayment(model: Model, loan: ModelLoan, kind: RepaymentKind, body: RepaymentBody): Outcome {
  if (findOpenOp(model, loan.id)) return conflict('OPERATION_IN_PROGRESS')
  let amount: bigint
  if (kind === 'partial_principal') {
    amount = unitsOf(body.amount!, 2)!
    if (amount >= loan.debt) return refuse(400, 'INVALID_AMOUNT', { field: 'amount' })
  } else {
    amount = kind === 'interest' ? loan.interestDue : loan.debt + loan.interestDue
    if (amount <= 0n) return refuse(400, 'INVALID_AMOUNT', { field: 'repayment_kind' })
    if (body.amount !== undefined && unitsOf(body.amount, 2) !== amount) return refuse(400, 'INVALID_AMOUNT', { field: 'amount' })
  }
  if (model.usdt < amount) return conflict('INSUFFICIENT_BALANCE')
  return {
    ok: true,
    apply(m, answer) {
      const id = answer.sandboxFlow.repaymentOperations.at(-1).operation_id as string
      m.ops.push({ id, loanId: loan.id, status: 'awaiting_payment', kind, amount })
      return [{ type: 'sandbox.repayment.updated', pick: pickOp(id) }]
    },
  }
}

function settle(model: Model, loan: ModelLoan, op: ModelOp): void {
  if (op.kind === 'interest') payInterest(loan, op.amount, model, true)
  else if (op.kind === 'partial_principal') {
    loan.debt -= op.amount
    loan.history.push({ type: 'principal_repaid', amount: op.amount, asset: 'USDT' })
  } else {
    if (loan.interestDue > 0n) payInterest(loan, loan.interestDue, model, false)
    loan.history.push({ type: 'principal_repaid', amount: loan.debt, asset: 'USDT' })
    loan.debt = 0n
  }
  op.status = 'settled'
}

/** The kind a start_payment asks for, or its 400. */
function resolveKind(body: RepaymentBody): RepaymentKind | Outcome {
  const kind = body.repayment_kind
  if (body.full_repayment === true) return kind === undefined || kind === 'full_principal' ? 'full_principal' : refuse(400, 'INVALID_AMOUNT')
  if (body.full_repayment === false && kind === 'full_principal') return refuse(400, 'INVALID_AMOUNT')
  if (kind === undefined) return refuse(400, 'INVALID_AMOUNT', { field: 'repayment_kind' })
  if (kind === 'partial_principal' && body.amount === undefined) return refuse(400, 'INVALID_AMOUNT', { field: 'amount' })
  return kind
}

/** POST /api/sandbox/loans/{loanId}/repayment-flow. */
export function predictRepayment(model: Model, loanId: string, body: RepaymentBody): Outcome {
  if (body.amount !== undefined && unitsOf(body.amount, 2) === null) return refuse(400, 'INVALID_AMOUNT')
  if (body.action !== 'start_payment' && body.operation_id === undefined) return refuse(400, 'INVALID_REQUEST')
  if (body.action === 'confirm_usdt' && (body.tx_hash === undefined || body.confirmations === undefined)) return refuse(400, 'INVALID_REQUEST')
  const kind = body.action === 'start_payment' ? resolveKind(body) : undefined
  if (typeof kind === 'object') return kind
  const loan = requireActive(model, loanId)
  if ('ok' in loan) return loan
  if (body.action === 'start_payment') return startPayment(model, loan, kind!, body)
  const op = model.ops.find((o) => o.id === body.operation_id && o.loanId === loanId)
  if (!op) return conflict('OPERATION_NOT_FOUND')
  const opEvent = (type: string) => [{ type, pick: pickOp(op.id) }]
  const expect = (status: ModelOp['status']) => (op.status === status ? null : conflict('STEP_OUT_OF_ORDER', { current_status: op.status }))
  switch (body.action) {
    case 'confirm_usdt': {
      const refused = expect('awaiting_payment')
      if (refused) return refused
      if (body.confirmations! < 6) return conflict('INSUFFICIENT_CONFIRMATIONS')
      if (model.usdt < op.amount) return conflict('INSUFFICIENT_BALANCE')
      return { ok: true, apply: (m) => { m.usdt -= op.amount; op.status = 'payment_confirmed'; return opEvent('sandbox.repayment.updated') } }
    }
    case 'run_kyt':
      return expect('payment_confirmed') ?? { ok: true, apply: () => { op.status = 'kyt_completed'; return opEvent('sandbox.repayment.updated') } }
    case 'complete_settlement':
      return expect('kyt_completed') ?? { ok: true, apply: (m) => { settle(m, loan, op); return opEvent('sandbox.repayment.settled') } }
    case 'complete_collateral_return':
      if (op.kind !== 'full_principal') return conflict('COLLATERAL_RETURN_NOT_APPLICABLE')
      return expect('settled') ?? {
        ok: true,
        apply(m) {
          closeLoan(loan, m)
          op.status = 'collateral_returned'
          return [{ type: 'sandbox.collateral.returned', pick: pickLoan(loan.id) }]
        },
      }
  }
}

