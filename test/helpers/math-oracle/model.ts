/**
 * The oracle's own picture of one key's loan state, in exact units, and the outcome it predicts
 * for a request. Ids come from the server's answers; every figure comes from formulas.ts.
 */

import type { ExactConfig } from './formulas.js'
import type { Fraction } from './exact.js'

/** One history line of a loan: type, amount in its asset's units. */
export interface ModelEntry {
  type: string
  amount: bigint
  asset: 'BTC' | 'USDT'
}

export interface ModelLoan {
  id: string
  status: 'active' | 'closed'
  debt: bigint
  principal: bigint
  collateral: bigint
  interestDue: bigint
  fee: bigint
  external_client_id?: string
  client_reference?: string
  history: ModelEntry[]
}

export interface ModelApp {
  id: string
  status: 'awaiting_collateral' | 'collateral_confirmed' | 'kyt_completed' | 'completed'
  collateral: bigint
  amount: bigint
  loanId?: string
  external_client_id?: string
  client_reference?: string
}

export type RepaymentKind = 'interest' | 'partial_principal' | 'full_principal'

export interface ModelOp {
  id: string
  loanId: string
  status: 'awaiting_payment' | 'payment_confirmed' | 'kyt_completed' | 'settled' | 'collateral_returned'
  kind: RepaymentKind
  amount: bigint
}

/** A fee-bearing change (an issue or an increase), in the order it happened. */
export interface ModelAccrual {
  loanId: string
  principal: bigint
  fee: bigint
}

export interface Model {
  config: ExactConfig
  btc: bigint
  usdt: bigint
  loans: ModelLoan[]
  apps: ModelApp[]
  draftId: string | null
  ops: ModelOp[]
  accruals: ModelAccrual[]
}

/** An event the step must emit: its type and the object it carries, as the step's answer shows it. */
export interface ExpectedEvent {
  type: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  pick: (answer: any) => unknown
}

/** A refusal: status, error_code, and the details fields that must match. */
export interface Refusal {
  ok: false
  status: number
  code: string
  details?: Record<string, unknown>
}

/** A success: applies itself to the model (given the answer, for new ids) and lists its events. */
export interface Success {
  ok: true
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  apply: (model: Model, answer: any) => ExpectedEvent[]
}

export type Outcome = Refusal | Success

/** A refusal with `details.reason` for a 409, or the other details given. */
export function refuse(status: number, code: string, details?: Record<string, unknown>): Refusal {
  return { ok: false, status, code, ...(details && { details }) }
}

/** A 409 FLOW_CONFLICT with `reason`. */
export function conflict(reason: string, details: Record<string, unknown> = {}): Refusal {
  return refuse(409, 'FLOW_CONFLICT', { reason, ...details })
}

/**
 * An amount a request carries: what is sent, and the exact decimal the partner meant by it (a
 * float-noise sum means the sum of its parts), or null for junk (zero, negative, a string).
 */
export interface Amount {
  send: unknown
  meant: Fraction | null
}

/** The amount in units of 10^-decimals, or null when the server must refuse it with 400 INVALID_AMOUNT. */
export function unitsOf(amount: Amount, decimals: number): bigint | null {
  const meant = amount.meant
  if (!meant || meant.n <= 0n) return null
  const scaled = meant.n * 10n ** BigInt(decimals)
  return scaled % meant.d === 0n ? scaled / meant.d : null
}

export function findLoan(model: Model, id: string): ModelLoan | undefined {
  return model.loans.find((loan) => loan.id === id)
}

export function findDraft(model: Model): ModelApp | undefined {
  return model.apps.find((app) => app.id === model.draftId)
}

/** The operation of `loanId` that still has a step to go. */
export function findOpenOp(model: Model, loanId: string): ModelOp | undefined {
  return model.ops.find((op) => op.loanId === loanId && isOpen(op))
}

export function isOpen(op: ModelOp): boolean {
  if (op.status === 'collateral_returned') return false
  return op.status !== 'settled' || op.kind === 'full_principal'
}

/** Event pickers: the object with `id` in the answer's lists. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const pickLoan = (id: string) => (answer: any) => [...answer.activeLoans, ...answer.loanHistory].find((loan: any) => loan.id === id)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const pickApp = (id: string) => (answer: any) => answer.sandboxFlow.loanApplications.find((app: any) => app.id === id)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const pickOp = (id: string) => (answer: any) => answer.sandboxFlow.repaymentOperations.find((op: any) => op.operation_id === id)
