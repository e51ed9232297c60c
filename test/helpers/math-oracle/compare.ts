/**
 * Compares what the server answered with the oracle's model, figure by figure in exact units.
 * Every function returns problems as text (empty: they agree).
 */

/* eslint-disable @typescript-eslint/no-explicit-any */
import { toUnits } from './exact.js'
import { collateralValueOf, feeOf, levelAt, ltvOf, periodInterestOf, rewardOf } from './formulas.js'
import type { Model, ModelLoan } from './model.js'

/** `shown` must be exactly `units` at `decimals` (a figure with float noise or more decimals is a problem). */
function expectUnits(problems: string[], where: string, shown: unknown, units: bigint, decimals: number): void {
  const got = typeof shown === 'number' ? toUnits(shown, decimals) : null
  if (got !== units) problems.push(`${where}: ${String(shown)}, expected ${Number(units) / 10 ** decimals}`)
}

function compareLoan(problems: string[], model: Model, shown: any, loan: ModelLoan): void {
  const at = `loan ${loan.id}`
  if (shown.status !== loan.status) problems.push(`${at}: status ${shown.status}, expected ${loan.status}`)
  expectUnits(problems, `${at} debt`, shown.debt, loan.debt, 2)
  expectUnits(problems, `${at} principal`, shown.principal, loan.principal, 2)
  expectUnits(problems, `${at} collateral`, shown.collateral, loan.collateral, 8)
  expectUnits(problems, `${at} interestDue`, shown.interestDue, loan.interestDue, 2)
  expectUnits(problems, `${at} originationFee`, shown.originationFee, loan.fee, 2)
  expectUnits(problems, `${at} ltv`, shown.ltv, ltvOf(loan.debt, loan.collateral, model.config), 2)
  if (shown.currency !== 'USDT') problems.push(`${at}: currency ${shown.currency}`)
  if (shown.external_client_id !== loan.external_client_id || shown.client_reference !== loan.client_reference) problems.push(`${at}: partner fields differ`)
  const history = shown.history as any[]
  if (history.length !== loan.history.length) problems.push(`${at}: history ${history.map((e) => e.type).join(',')}, expected ${loan.history.map((e) => e.type).join(',')}`)
  loan.history.forEach((entry, i) => {
    const line = history[i]
    if (!line || line.type !== entry.type || line.asset !== entry.asset) return problems.push(`${at} history[${i}]: ${line?.type}, expected ${entry.type}`)
    expectUnits(problems, `${at} history[${i}] ${entry.type}`, line.amount, entry.amount, entry.asset === 'BTC' ? 8 : 2)
  })
}

/** The loan state part of an answer (POST body, GET loans, GET state's `loans`). */
export function compareLoanState(model: Model, state: any): string[] {
  const problems: string[] = []
  const c = model.config
  expectUnits(problems, 'wallet BTC', state.wallet.BTC, model.btc, 8)
  expectUnits(problems, 'wallet USDT', state.wallet.USDT, model.usdt, 2)
  const ids = (list: any[]) => list.map((item) => item.id).join(',')
  const active = model.loans.filter((l) => l.status === 'active')
  const closed = model.loans.filter((l) => l.status !== 'active')
  if (ids(state.activeLoans) !== ids(active) || ids(state.loanHistory) !== ids(closed)) {
    problems.push(`loans: active [${ids(state.activeLoans)}] history [${ids(state.loanHistory)}], expected [${ids(active)}] [${ids(closed)}]`)
    return problems
  }
  active.forEach((loan, i) => compareLoan(problems, model, state.activeLoans[i], loan))
  closed.forEach((loan, i) => compareLoan(problems, model, state.loanHistory[i], loan))
  if ((state.draft?.id ?? null) !== model.draftId) problems.push(`draft ${state.draft?.id}, expected ${model.draftId}`)
  const apps = state.sandboxFlow.loanApplications as any[]
  if (ids(apps) !== ids(model.apps)) problems.push('loanApplications differ')
  else model.apps.forEach((app, i) => {
    const shown = apps[i]
    const at = `application ${app.id}`
    if (shown.status !== app.status || shown.loan_id !== app.loanId) problems.push(`${at}: ${shown.status}/${shown.loan_id}, expected ${app.status}/${app.loanId}`)
    expectUnits(problems, `${at} collateral_btc`, shown.collateral_btc, app.collateral, 8)
    expectUnits(problems, `${at} loan_amount`, shown.loan_amount, app.amount, 2)
    const calc = shown.calculation
    const fee = feeOf(app.amount, c)
    expectUnits(problems, `${at} calculation.originationFee`, calc.originationFee, fee, 2)
    expectUnits(problems, `${at} calculation.payoutAmount`, calc.payoutAmount, app.amount - fee, 2)
    expectUnits(problems, `${at} calculation.interestDue`, calc.interestDue, periodInterestOf(app.amount, c), 2)
    expectUnits(problems, `${at} calculation.ltv`, calc.ltv, ltvOf(app.amount, app.collateral, c), 2)
    expectUnits(problems, `${at} calculation.collateralValueUsd`, calc.collateralValueUsd, collateralValueOf(app.collateral, c), 2)
  })
  const ops = state.sandboxFlow.repaymentOperations as any[]
  if (ops.map((o) => o.operation_id).join(',') !== model.ops.map((o) => o.id).join(',')) problems.push('repaymentOperations differ')
  else model.ops.forEach((op, i) => {
    const shown = ops[i]
    const at = `operation ${op.id}`
    if (shown.status !== op.status || shown.repayment_kind !== op.kind || shown.loan_id !== op.loanId) problems.push(`${at}: ${shown.status}/${shown.repayment_kind}, expected ${op.status}/${op.kind}`)
    if ((shown.wallets.collateralReturn === null) !== (op.kind !== 'full_principal')) problems.push(`${at}: collateralReturn wallet ${JSON.stringify(shown.wallets.collateralReturn)}`)
    expectUnits(problems, `${at} amount`, shown.amount, op.amount, 2)
  })
  return problems
}

/** The partner block: levels from issued volume, one reward per issue or increase, deals by client fields. */
export function comparePartner(model: Model, partner: any): string[] {
  const problems: string[] = []
  const c = model.config
  let volume = 0n
  const entries = model.accruals.map((accrual) => {
    const level = levelAt(volume, c)
    volume += accrual.principal
    return { ...accrual, percent: level.percent, reward: rewardOf(accrual.fee, level.percent) }
  })
  const shown = partner.rewards.entries as any[]
  if (shown.length !== entries.length) problems.push(`rewards: ${shown.length} entries, expected ${entries.length}`)
  entries.forEach((entry, i) => {
    const line = shown[i]
    if (!line) return
    const at = `rewards.entries[${i}]`
    if (line.loan_id !== entry.loanId) problems.push(`${at}: loan ${line.loan_id}, expected ${entry.loanId}`)
    expectUnits(problems, `${at} origination_fee`, line.origination_fee, entry.fee, 2)
    if (line.reward_percent !== Number(entry.percent.n) / Number(entry.percent.d)) problems.push(`${at}: reward_percent ${line.reward_percent}, expected ${Number(entry.percent.n) / Number(entry.percent.d)}`)
    expectUnits(problems, `${at} amount_usd`, line.amount_usd, entry.reward, 2)
  })
  expectUnits(problems, 'rewards.accrued_usd', partner.rewards.accrued_usd, entries.reduce((sum, e) => sum + e.reward, 0n), 2)
  expectUnits(problems, 'levels.volume_usd', partner.levels.volume_usd, volume, 2)
  if (partner.levels.current.level !== levelAt(volume, c).level) problems.push(`levels.current ${partner.levels.current.level}, expected ${levelAt(volume, c).level}`)
  const next = c.levels.find((row) => row.min > volume)
  if ((partner.levels.next?.level ?? null) !== (next?.level ?? null)) problems.push(`levels.next ${partner.levels.next?.level}, expected ${next?.level}`)
  if (next) expectUnits(problems, 'levels.next.remaining_usd', partner.levels.next.remaining_usd, next.min - volume, 2)
  const groups = new Map<string, ModelLoan[]>()
  for (const loan of model.loans.filter((l) => l.external_client_id !== undefined || l.client_reference !== undefined)) {
    const key = JSON.stringify([loan.external_client_id ?? null, loan.client_reference ?? null])
    groups.set(key, [...(groups.get(key) ?? []), loan])
  }
  const deals = partner.links[0].deals as any[]
  if (deals.length !== groups.size) problems.push(`deals: ${deals.length}, expected ${groups.size}`)
  ;[...groups.values()].forEach((loans, i) => {
    const deal = deals[i]
    if (!deal) return
    if (deal.loans.map((l: any) => l.loan_id).join(',') !== loans.map((l) => l.id).join(',')) problems.push(`deal ${i}: loans differ`)
    deal.loans.forEach((l: any, j: number) => {
      if (loans[j]) expectUnits(problems, `deal ${i} loan ${l.loan_id} amount`, l.amount, loans[j]!.principal, 2)
    })
    expectUnits(problems, `deal ${i} volume_usd`, deal.volume_usd, loans.reduce((sum, l) => sum + l.principal, 0n), 2)
  })
  return problems
}
