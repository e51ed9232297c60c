/**
 * Checks of one key's loan state that hold whatever the walk did: every figure exact at its
 * decimals, nothing negative, each loan agreeing with its own history, and BTC and USDT
 * conserved between the wallet, the loans and the open steps. Figures are compared in integer
 * satoshis and cents, so the checks never share the server's float rounding.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */
type State = any

/** The config figures the checks need. */
export interface ModelConfig {
  btcUsd: number
  maxLtv: number
}

/** Integer units of `value` at `decimals`, or NaN when it has more decimals than that. */
export function toUnits(value: number, decimals: number): number {
  const scaled = Number((value * 10 ** decimals).toPrecision(15))
  return Number.isInteger(scaled) ? scaled : Number.NaN
}

export const sats = (value: number) => toUnits(value, 8)
export const cents = (value: number) => toUnits(value, 2)

/** LTV percent in hundredths, rounded half up, computed exactly from cents and satoshis. */
export function expectedLtv(debtCents: number, collateralSats: number, btcUsd: number): number {
  if (debtCents <= 0) return 0
  // LTV% = debt / (collateral * rate) * 100; in hundredths: debtCents * 1e10 / (sats * rate).
  const rateMilli = BigInt(Math.round(btcUsd * 1000))
  const numerator = BigInt(debtCents) * 10n ** 13n * 2n
  const denominator = BigInt(collateralSats) * rateMilli
  if (denominator === 0n) return Number.POSITIVE_INFINITY
  return Number((numerator / denominator + 1n) / 2n) / 100
}

const sumOf = (entries: any[], type: string, unit: (v: number) => number) =>
  entries.filter((entry) => entry.type === type).reduce((sum, entry) => sum + unit(entry.amount), 0)

/** Problems of one loan: figures, history agreement and LTV at the current price. */
function checkLoan(loan: State, config: ModelConfig, problems: string[]): void {
  const where = `loan ${loan.id}`
  for (const field of ['debt', 'principal', 'interestDue', 'originationFee']) {
    const units = cents(loan[field])
    if (!(units >= 0)) problems.push(`${where}: ${field} ${loan[field]} is negative or not whole cents`)
  }
  if (!(sats(loan.collateral) >= 0)) problems.push(`${where}: collateral ${loan.collateral} is negative or not whole satoshis`)
  const history: any[] = loan.history
  for (const entry of history) {
    const units = entry.asset === 'BTC' ? sats(entry.amount) : cents(entry.amount)
    if (entry.amount !== undefined && !(units >= 0)) problems.push(`${where}: history ${entry.type} amount ${entry.amount} is negative or inexact`)
  }
  const principal = sumOf(history, 'issued', cents) + sumOf(history, 'loan_increased', cents)
  if (cents(loan.principal) !== principal) problems.push(`${where}: principal ${loan.principal} but history issued+increased ${principal / 100}`)
  const fees = sumOf(history, 'origination_fee', cents)
  if (cents(loan.originationFee) !== fees) problems.push(`${where}: originationFee ${loan.originationFee} but history fees ${fees / 100}`)
  if (loan.status === 'active') {
    const debt = principal - sumOf(history, 'principal_repaid', cents)
    if (cents(loan.debt) !== debt) problems.push(`${where}: debt ${loan.debt} but history says ${debt / 100}`)
    const collateral = sumOf(history, 'collateral_deposited', sats) + sumOf(history, 'collateral_added', sats) - sumOf(history, 'collateral_removed', sats)
    if (sats(loan.collateral) !== collateral) problems.push(`${where}: collateral ${loan.collateral} but history says ${collateral / 1e8}`)
    const ltv = expectedLtv(cents(loan.debt), sats(loan.collateral), config.btcUsd)
    if (loan.ltv !== ltv) problems.push(`${where}: ltv ${loan.ltv}, expected ${ltv} at btc_usd ${config.btcUsd}`)
  } else if (loan.debt !== 0 || loan.collateral !== 0 || loan.interestDue !== 0) {
    problems.push(`${where}: ${loan.status} but debt ${loan.debt}, collateral ${loan.collateral}, interestDue ${loan.interestDue}`)
  }
}

/** Problems of a loan-state view (GET /loans, or the body of a loan POST). */
export function checkLoanState(state: State, config: ModelConfig, initial: { BTC: number; USDT: number }): string[] {
  const problems: string[] = []
  const walletBtc = sats(state.wallet.BTC)
  const walletUsdt = cents(state.wallet.USDT)
  if (!(walletBtc >= 0)) problems.push(`wallet BTC ${state.wallet.BTC} is negative or inexact`)
  if (!(walletUsdt >= 0)) problems.push(`wallet USDT ${state.wallet.USDT} is negative or inexact`)
  const loans: any[] = [...state.activeLoans, ...state.loanHistory]
  if (state.activeLoans.some((loan: State) => loan.status !== 'active')) problems.push('activeLoans holds a loan that is not active')
  if (state.loanHistory.some((loan: State) => loan.status === 'active')) problems.push('loanHistory holds an active loan')
  if (new Set(loans.map((loan) => loan.id)).size !== loans.length) problems.push('a loan id appears twice')
  for (const loan of loans) checkLoan(loan, config, problems)

  // BTC: the wallet plus what loans and a confirmed draft hold is what the key started with.
  const apps: any[] = state.sandboxFlow.loanApplications
  const open = apps.filter((app) => app.status !== 'completed')
  if (open.length > 1) problems.push(`${open.length} open applications`)
  if ((state.draft?.id ?? null) !== (open[0]?.id ?? null)) problems.push(`draft ${state.draft?.id} is not the open application ${open[0]?.id}`)
  const held = open.filter((app) => app.status !== 'awaiting_collateral').reduce((sum, app) => sum + sats(app.collateral_btc), 0)
  const btc = walletBtc + held + state.activeLoans.reduce((sum: number, loan: State) => sum + sats(loan.collateral), 0)
  if (btc !== sats(initial.BTC)) problems.push(`BTC not conserved: wallet+collateral = ${btc / 1e8}, started with ${initial.BTC}`)

  // USDT: start + payouts - repayments - payments confirmed but not yet settled.
  const ops: any[] = state.sandboxFlow.repaymentOperations
  const inTransit = ops.filter((op) => op.status === 'payment_confirmed' || op.status === 'kyt_completed').reduce((sum, op) => sum + cents(op.amount), 0)
  let usdt = cents(initial.USDT) - inTransit
  for (const loan of loans) {
    const h: any[] = loan.history
    usdt += sumOf(h, 'issued', cents) + sumOf(h, 'loan_increased', cents) - sumOf(h, 'origination_fee', cents)
    usdt -= sumOf(h, 'interest_paid', cents) + sumOf(h, 'principal_repaid', cents)
  }
  if (usdt !== walletUsdt) problems.push(`USDT not conserved: history says ${usdt / 100}, wallet holds ${state.wallet.USDT}`)

  const openOps = ops.filter((op) => !['settled', 'collateral_returned'].includes(op.status) || (op.status === 'settled' && op.repayment_kind === 'full_principal'))
  const perLoan = new Set(openOps.map((op) => op.loan_id))
  if (perLoan.size !== openOps.length) problems.push('a loan has more than one open repayment operation')
  for (const op of ops) {
    if (!(cents(op.amount) > 0)) problems.push(`operation ${op.operation_id}: amount ${op.amount} not positive whole cents`)
    if (!loans.some((loan) => loan.id === op.loan_id)) problems.push(`operation ${op.operation_id} names unknown loan ${op.loan_id}`)
  }
  return problems
}
