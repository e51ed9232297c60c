/**
 * What decisions.md "Direct actions" and the README say each direct action does to an active
 * loan, and the limits it is refused at.
 */

import { divideHalfUp, maxOf } from './exact.js'
import { exceedsMax, feeOf, ltvOf, maxDebtOf, neededSatsOf } from './formulas.js'
import { conflict, findOpenOp, pickLoan, refuse, unitsOf, type Amount, type ExpectedEvent, type Model, type ModelLoan, type Outcome } from './model.js'
import { closeLoan, payInterest, requireActive } from './predict-repay.js'

export type DirectAction = 'repay_interest' | 'repay_principal' | 'add_collateral' | 'remove_collateral' | 'increase_loan'

export interface ActionBody {
  action: DirectAction
  amount: Amount
}

/** BTC that may leave `loan` keeping LTV at most the maximum, in satoshis. */
export function maxRemovableOf(loan: ModelLoan, model: Model): bigint {
  return maxOf(0n, loan.collateral - neededSatsOf(loan.debt, model.config))
}

/** The LTV an LTV_LIMIT refusal reports: the displayed one, or the next hundredth above the maximum. */
function excessLtv(debt: bigint, sats: bigint, model: Model): number {
  const { maxLtv } = model.config
  const shown = ltvOf(debt, sats, model.config)
  // shown / 100 > max  <=>  shown × d > 100 × n
  if (shown * maxLtv.d > 100n * maxLtv.n) return Number(shown) / 100
  return Number(divideHalfUp(maxLtv.n * 100n + maxLtv.d, maxLtv.d)) / 100
}

type Change = (m: Model, loan: ModelLoan) => string[]

function success(loan: ModelLoan, change: Change): Outcome {
  return {
    ok: true,
    apply(m) {
      const extra = change(m, loan)
      const events: ExpectedEvent[] = [{ type: 'sandbox.loan.updated', pick: pickLoan(loan.id) }]
      for (const type of extra) events.push({ type, pick: pickLoan(loan.id) })
      return events
    },
  }
}

/** POST /api/sandbox/loans/{loanId}/action. */
export function predictAction(model: Model, loanId: string, body: ActionBody): Outcome {
  const btc = body.action === 'add_collateral' || body.action === 'remove_collateral'
  if (unitsOf(body.amount, 8) === null) return refuse(400, 'INVALID_AMOUNT')
  const amount = unitsOf(body.amount, btc ? 8 : 2)
  if (amount === null) return refuse(400, 'INVALID_AMOUNT', { field: 'amount' })
  const loan = requireActive(model, loanId)
  if ('ok' in loan) return loan
  if (findOpenOp(model, loan.id)) return conflict('OPERATION_IN_PROGRESS')
  const c = model.config
  switch (body.action) {
    case 'repay_interest':
      if (amount > loan.interestDue) return refuse(400, 'INVALID_AMOUNT', { field: 'amount' })
      if (model.usdt < amount) return conflict('INSUFFICIENT_BALANCE')
      return success(loan, (m, l) => { m.usdt -= amount; payInterest(l, amount, m, true); return [] })
    case 'repay_principal': {
      if (amount > loan.debt) return refuse(400, 'INVALID_AMOUNT', { field: 'amount' })
      const total = amount === loan.debt ? amount + loan.interestDue : amount
      if (model.usdt < total) return conflict('INSUFFICIENT_BALANCE')
      return success(loan, (m, l) => {
        m.usdt -= total
        if (amount < l.debt) {
          l.debt -= amount
          l.history.push({ type: 'principal_repaid', amount, asset: 'USDT' })
          return []
        }
        if (l.interestDue > 0n) payInterest(l, l.interestDue, m, false)
        l.history.push({ type: 'principal_repaid', amount, asset: 'USDT' })
        l.debt = 0n
        closeLoan(l, m)
        return ['sandbox.collateral.returned']
      })
    }
    case 'add_collateral':
      if (loan.collateral + amount > c.collateralMax) return refuse(400, 'INVALID_AMOUNT', { limit: 'limits.collateral_btc.max' })
      if (model.btc < amount) return conflict('INSUFFICIENT_BALANCE')
      return success(loan, (m, l) => {
        m.btc -= amount
        l.collateral += amount
        l.history.push({ type: 'collateral_added', amount, asset: 'BTC' })
        return []
      })
    case 'remove_collateral': {
      if (amount > loan.collateral) return refuse(400, 'INVALID_AMOUNT', { field: 'amount' })
      const left = loan.collateral - amount
      const removable = Number(maxRemovableOf(loan, model)) / 1e8
      if (left === 0n && loan.debt > 0n) return conflict('LTV_LIMIT', { max_removable_btc: removable })
      if (exceedsMax(loan.debt, left, c)) return conflict('LTV_LIMIT', { max_removable_btc: removable, ltv: excessLtv(loan.debt, left, model) })
      return success(loan, (m, l) => {
        m.btc += amount
        l.collateral = left
        l.history.push({ type: 'collateral_removed', amount, asset: 'BTC' })
        return ['sandbox.collateral.returned']
      })
    }
    case 'increase_loan': {
      const debt = loan.debt + amount
      if (debt > c.loanMax) return refuse(400, 'INVALID_AMOUNT', { limit: 'limits.loan_amount.max' })
      if (exceedsMax(debt, loan.collateral, c)) {
        const room = maxOf(0n, maxDebtOf(loan.collateral, c) - loan.debt)
        return conflict('LTV_LIMIT', { max_increase: Number(room) / 100, ltv: excessLtv(debt, loan.collateral, model) })
      }
      return success(loan, (m, l) => {
        const fee = feeOf(amount, c)
        m.usdt += amount - fee
        l.debt = debt
        l.principal += amount
        l.fee += fee
        l.history.push({ type: 'loan_increased', amount, asset: 'USDT' }, { type: 'origination_fee', amount: fee, asset: 'USDT' })
        m.accruals.push({ loanId: l.id, principal: amount, fee })
        return []
      })
    }
  }
}
