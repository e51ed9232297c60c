import { cents, sats } from './money-checks.js'

/**
 * The status a well-formed flow step must get from the key's state before it (spec part 3: a
 * step sent from the wrong state is 409 FLOW_CONFLICT, an allowed one succeeds). Answers the
 * statuses allowed, or undefined where the walk does not predict.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */

const OPEN = ['awaiting_payment', 'payment_confirmed', 'kyt_completed']
const isOpen = (op: any) => OPEN.includes(op.status) || (op.status === 'settled' && op.repayment_kind === 'full_principal')

function predictFlow(body: any, state: any): number[] | undefined {
  if (body.application_id !== undefined) return undefined
  const draft = state.draft
  switch (body.action) {
    case 'start_collateral_transfer': return draft ? [400, 409] : undefined
    case 'confirm_btc':
      if (draft?.status !== 'awaiting_collateral' || body.confirmations < 2) return [409]
      return sats(state.wallet.BTC) < sats(draft.collateral_btc) ? [409] : [200]
    case 'run_kyt': return draft?.status === 'collateral_confirmed' ? [200] : [409]
    case 'complete_payout': return draft?.status === 'kyt_completed' ? [200] : [409]
  }
  return undefined
}

/** A start_payment body refused before the loan is looked at: its schema, or its kind and amount fields. */
function isMalformedStart(body: any): boolean {
  const kind = body.full_repayment === true ? 'full_principal' : body.repayment_kind
  if (body.amount !== undefined && !(cents(body.amount) > 0)) return true
  if (kind === undefined || (kind === 'partial_principal' && body.amount === undefined)) return true
  return body.full_repayment === true && body.repayment_kind !== undefined && body.repayment_kind !== 'full_principal'
}

function predictStart(body: any, loan: any, state: any): number[] {
  const kind = body.full_repayment === true ? 'full_principal' : body.repayment_kind
  if (isMalformedStart(body)) return [400]
  if (loan.status !== 'active') return [409]
  if (state.sandboxFlow.repaymentOperations.some((op: any) => op.loan_id === loan.id && isOpen(op))) return [409]
  let due: number
  if (kind === 'partial_principal') {
    const amount = cents(Math.round(body.amount * 100) / 100)
    if (!(amount > 0) || amount >= cents(loan.debt)) return [400]
    due = amount
  } else {
    due = kind === 'interest' ? cents(loan.interestDue) : cents(loan.debt) + cents(loan.interestDue)
    if (due <= 0) return [400]
    if (body.amount !== undefined && cents(Math.round(body.amount * 100) / 100) !== due) return [400]
  }
  return cents(state.wallet.USDT) < due ? [409] : [200]
}

function predictRepayment(body: any, loan: any, state: any): number[] | undefined {
  if (body.action === 'start_payment') return predictStart(body, loan, state)
  if (loan.status !== 'active') return [409]
  const op = state.sandboxFlow.repaymentOperations.find((o: any) => o.operation_id === body.operation_id && o.loan_id === loan.id)
  if (!op) return [409]
  switch (body.action) {
    case 'confirm_usdt':
      if (op.status !== 'awaiting_payment' || body.confirmations < 6) return [409]
      return cents(state.wallet.USDT) < cents(op.amount) ? [409] : [200]
    case 'run_kyt': return op.status === 'payment_confirmed' ? [200] : [409]
    case 'complete_settlement': return op.status === 'kyt_completed' ? [200] : [409]
    case 'complete_collateral_return': return op.repayment_kind === 'full_principal' && op.status === 'settled' ? [200] : [409]
  }
  return undefined
}

/** Statuses allowed for the planned `body` on `path` from `state`, or undefined. */
export function predictStatus(path: string, body: any, state: any): number[] | undefined {
  if (path === '/api/sandbox/loans/flow') return predictFlow(body, state)
  const match = /^\/api\/sandbox\/loans\/([^/]+)\/(action|repayment-flow)$/.exec(path)
  if (!match) return undefined
  let id: string
  try {
    id = decodeURIComponent(match[1]!)
  } catch {
    return undefined
  }
  if (id === '..' || id === '.') return undefined
  const loan = [...state.activeLoans, ...state.loanHistory].find((l: any) => l.id === id)
  if (match[2] === 'repayment-flow') {
    if (body.action === 'start_payment' && isMalformedStart(body)) return [400]
    return loan ? predictRepayment(body, loan, state) : [404]
  }
  if (!(body.amount > 0)) return [400]
  if (!loan) return [400, 404]
  if (loan.status !== 'active') return [400, 409]
  return undefined
}
