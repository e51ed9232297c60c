import type { Random } from './random.js'
import type { FullModelConfig } from './transitions.js'

/**
 * Request bodies of the walk's valid-looking steps, chosen from the key's last known state:
 * mostly the step the state expects, sometimes any other, with amounts near the limits.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */

/** A request the walk will send. */
export interface PlannedRequest {
  method: 'GET' | 'POST' | 'DELETE' | 'PUT'
  path: string
  body?: Record<string, unknown>
}

const FLOW = ['start_collateral_transfer', 'confirm_btc', 'run_kyt', 'complete_payout'] as const
const NEXT_FLOW: Record<string, string> = { awaiting_collateral: 'confirm_btc', collateral_confirmed: 'run_kyt', kyt_completed: 'complete_payout' }
const REPAY = ['start_payment', 'confirm_usdt', 'run_kyt', 'complete_settlement', 'complete_collateral_return'] as const
const ACTIONS = ['repay_interest', 'repay_principal', 'add_collateral', 'remove_collateral', 'increase_loan'] as const

/** A number with `decimals` places, uniform-ish in [min, max]. */
function amount(random: Random, min: number, max: number, decimals: number): number {
  const scale = 10 ** decimals
  return Math.round((min + random.next() * (max - min)) * scale) / scale
}

/** A collateral and loan amount, mostly inside the limits and LTV, sometimes just outside. */
export function newLoanAmounts(random: Random, config: FullModelConfig): { collateral_btc: number; loan_amount: number } {
  const collateral = random.chance(0.1) ? random.pick([0.001, 0.00099999, 100, 100.00000001, 0.00000001]) : amount(random, 0.001, 0.4, random.pick([2, 4, 8]))
  const maxDebt = (collateral * config.btcUsd * config.maxLtv) / 100
  const factor = random.chance(0.15) ? random.pick([1, 1.0001, 1.5]) : random.next()
  const loan = random.chance(0.1) ? random.pick([100, 99.99, 1000000, 1000000.01]) : Math.max(100, Math.floor(maxDebt * factor * 100) / 100)
  return { collateral_btc: collateral, loan_amount: loan }
}

/** A loan flow step: usually the one the draft expects. */
export function planFlowStep(random: Random, state: any, config: FullModelConfig): PlannedRequest {
  const expected = state.draft ? NEXT_FLOW[state.draft.status]! : 'start_collateral_transfer'
  const action = random.chance(0.7) ? expected : random.pick(FLOW)
  const body: Record<string, unknown> = { action }
  if (action === 'start_collateral_transfer') {
    Object.assign(body, newLoanAmounts(random, config))
    if (random.chance(0.3)) body.external_client_id = random.pick(['client-1', 'client-2', 'клиент-é🙂'])
    if (random.chance(0.2)) body.client_reference = random.pick(['ref-a', 'ref-b'])
  }
  if (action === 'confirm_btc') Object.assign(body, { tx_hash: `tx_${random.int(0, 1e6)}`, confirmations: random.chance(0.85) ? random.int(2, 12) : random.int(0, 1) })
  if (random.chance(0.1)) {
    const apps: any[] = state.sandboxFlow.loanApplications
    body.application_id = apps.length && random.chance(0.7) ? random.pick(apps).id : 'app_unknown'
  }
  return { method: 'POST', path: '/api/sandbox/loans/flow', body }
}

/** A direct loan. */
export function planCreateLoan(random: Random, config: FullModelConfig): PlannedRequest {
  return { method: 'POST', path: '/api/sandbox/loans', body: { ...newLoanAmounts(random, config), ...(random.chance(0.3) && { client_reference: 'direct' }) } }
}

/** A loan of the state to act on: mostly active, sometimes closed or unknown. */
function pickLoanId(random: Random, state: any): string {
  const active: any[] = state.activeLoans
  if (active.length && random.chance(0.85)) return random.pick(active).id
  if (state.loanHistory.length && random.chance(0.6)) return random.pick<any>(state.loanHistory).id
  return random.pick(['loan_unknown', 'loan_ü', '..', '%2e%2e', 'a'.repeat(200)])
}

/** A repayment step on one of the key's loans: usually the one its open operation expects. */
export function planRepaymentStep(random: Random, state: any): PlannedRequest {
  const loanId = pickLoanId(random, state)
  const loan = [...state.activeLoans, ...state.loanHistory].find((l: any) => l.id === loanId)
  const ops: any[] = state.sandboxFlow.repaymentOperations.filter((op: any) => op.loan_id === loanId)
  const open = ops.find((op) => ['awaiting_payment', 'payment_confirmed', 'kyt_completed'].includes(op.status) || (op.status === 'settled' && op.repayment_kind === 'full_principal'))
  const next = open ? { awaiting_payment: 'confirm_usdt', payment_confirmed: 'run_kyt', kyt_completed: 'complete_settlement', settled: 'complete_collateral_return' }[open.status as string]! : 'start_payment'
  const action = random.chance(0.75) ? next : random.pick(REPAY)
  const body: Record<string, unknown> = { action }
  if (action === 'start_payment') {
    const kind = random.weighted({ interest: 3, partial_principal: 3, full_principal: 2, full_repayment: 1, none: 0.3 })
    if (kind === 'full_repayment') body.full_repayment = true
    else if (kind !== 'none') body.repayment_kind = kind
    if (kind === 'partial_principal' || random.chance(0.1)) {
      const debt = loan?.debt ?? 1000
      body.amount = random.chance(0.85) ? Math.max(0.01, Math.floor(debt * random.next() * 100) / 100) : random.pick([debt, 0.01, debt - 0.01, 0.001])
    }
  } else {
    const pickOp = open && random.chance(0.85) ? open : ops.length && random.chance(0.5) ? random.pick(ops) : null
    body.operation_id = pickOp?.operation_id ?? 'rop_unknown'
  }
  if (action === 'confirm_usdt') Object.assign(body, { tx_hash: `tx_${random.int(0, 1e6)}`, confirmations: random.chance(0.85) ? random.int(6, 30) : random.int(0, 5) })
  return { method: 'POST', path: `/api/sandbox/loans/${encodeURIComponent(loanId)}/repayment-flow`, body }
}

/** A direct action with an amount near the loan's own figures. */
export function planDirectAction(random: Random, state: any, config: FullModelConfig): PlannedRequest {
  const loanId = pickLoanId(random, state)
  const loan = [...state.activeLoans, ...state.loanHistory].find((l: any) => l.id === loanId)
  const action = random.pick(ACTIONS)
  let value: number
  const debt = loan?.debt ?? 1000
  const collateral = loan?.collateral ?? 0.1
  switch (action) {
    case 'repay_interest': value = random.chance(0.5) ? loan?.interestDue ?? 1 : amount(random, 0.01, Math.max(0.02, loan?.interestDue ?? 1), 2); break
    case 'repay_principal': value = random.chance(0.3) ? debt : amount(random, 0.01, Math.max(0.02, debt), 2); break
    case 'add_collateral': value = amount(random, 0.00000001, 0.3, random.pick([2, 8])); break
    case 'remove_collateral': value = random.chance(0.2) ? collateral : amount(random, 0.00000001, Math.max(0.00000002, collateral), 8); break
    case 'increase_loan': {
      const room = (collateral * config.btcUsd * config.maxLtv) / 100 - debt
      value = Math.max(0.01, random.chance(0.2) ? Math.ceil(room * 100) / 100 : amount(random, 0.01, Math.max(0.02, room), 2))
    }
  }
  if (random.chance(0.05)) value = random.pick([0.005, 1e-9, 0.1 + 0.2, 19999.99 + 199.99])
  return { method: 'POST', path: `/api/sandbox/loans/${encodeURIComponent(loanId)}/action`, body: { action, amount: value } }
}

/** A partner profile update, sometimes the first create without a name. */
export function planPartner(random: Random): PlannedRequest {
  const body: Record<string, unknown> = {}
  if (random.chance(0.8)) body.name = random.pick(['Acme', '  Acme  ', 'Ünïcødé 🙂 Partner', 'x'.repeat(200)])
  if (random.chance(0.4)) body.email = random.pick(['ops@example.com', null])
  if (random.chance(0.3)) body.website = random.pick(['https://partner.example', 'http://partner.example/a?b=c', null])
  if (random.chance(0.3)) body.payout_address = random.pick(['addr-1', null, ' padded '])
  return { method: 'POST', path: '/api/sandbox/partner', body }
}

/** A webhook endpoint create or update, to the walk's loopback receiver (the only host it may use). */
export function planWebhookSave(random: Random, receiverBase: string, key: number): PlannedRequest {
  const body: Record<string, unknown> = { url: `${receiverBase}/ep/${key}/${random.weighted({ ok: 5, fail: 2, recover: 3 })}` }
  if (random.chance(0.5)) body.events = random.pick([['sandbox.loan.issued'], ['sandbox.webhook.test', 'sandbox.loan.updated'], ['sandbox.repayment.settled', 'sandbox.repayment.settled']])
  if (random.chance(0.3)) body.rotate_secret = random.chance(0.8)
  return { method: 'POST', path: '/api/sandbox/webhooks', body }
}
