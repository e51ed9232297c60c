import { describe, expect, it } from 'vitest'
import type { LoanBook } from '../../src/domain/types.js'
import { createTestContext, directAction, expectRejectedUnchanged, fixtureConfig, issueLoanThroughFlow, loanIn, repaymentStep } from './domain-helpers.js'

/** A fresh standard loan (debt 20000, 0.5 BTC, interest due 200; wallet 1.5 BTC / 29800 USDT). */
function setup(config = fixtureConfig) {
  const ctx = createTestContext(config)
  const { book, loan } = issueLoanThroughFlow(ctx)
  const act = (b: LoanBook, action: string, amount: unknown) => directAction(b, loan.id, { action, amount }, ctx)
  return { ctx, book, loanId: loan.id, act }
}

describe('direct actions', () => {
  it('repay_interest pays part of the interest, and paying it off makes the next period due', () => {
    const { book, loanId, act } = setup()
    const part = act(book, 'repay_interest', 50)
    expect(loanIn(part.book, loanId)).toMatchObject({ interestDue: 150, debt: 20000 })
    expect(part.book.wallet.USDT).toBe(29750)
    expect(part.events).toEqual([expect.objectContaining({ type: 'sandbox.loan.updated', data: { object: loanIn(part.book, loanId) } })])
    const rest = act(part.book, 'repay_interest', 150)
    expect(loanIn(rest.book, loanId).interestDue).toBe(200)
    expect(loanIn(rest.book, loanId).history.slice(-2).map((h) => [h.type, h.amount])).toEqual([['interest_paid', 50], ['interest_paid', 150]])
    expect(rest.book.wallet.USDT).toBe(29600)
  })

  it('repay_principal lowers the debt and recomputes the LTV', () => {
    const { book, loanId, act } = setup()
    const result = act(book, 'repay_principal', 5000)
    expect(loanIn(result.book, loanId)).toMatchObject({ status: 'active', debt: 15000, ltv: 31.58, interestDue: 200 })
    expect(result.book.wallet.USDT).toBe(24800)
    expect(result.events.map((e) => e.type)).toEqual(['sandbox.loan.updated'])
  })

  it('repay_principal of the whole debt also pays the interest due, closes the loan and returns the collateral', () => {
    const { book, loanId, act } = setup()
    const result = act(book, 'repay_principal', 20000)
    const loan = loanIn(result.book, loanId)
    expect(loan).toMatchObject({ status: 'closed', debt: 0, interestDue: 0, collateral: 0, ltv: 0 })
    expect(loan.history.slice(-3).map((h) => h.type)).toEqual(['interest_paid', 'principal_repaid', 'collateral_returned'])
    expect(result.book.wallet).toEqual({ BTC: 2, USDT: 9600 })
    expect(result.events.map((e) => [e.type, (e.data.object as { status: string }).status])).toEqual([
      ['sandbox.loan.updated', 'closed'],
      ['sandbox.collateral.returned', 'closed'],
    ])
  })

  it('repay_principal of the whole debt needs debt plus interest in the wallet', () => {
    const { book, loanId, act } = setup()
    const short: LoanBook = { ...book, wallet: { ...book.wallet, USDT: 20100 } }
    const error = expectRejectedUnchanged(short, (b) => act(b, 'repay_principal', 20000), 'FLOW_CONFLICT', 'INSUFFICIENT_BALANCE')
    expect(error.details).toMatchObject({ required: 20200, available: 20100 })
    expect(loanIn(book, loanId).status).toBe('active')
  })

  it('add_collateral takes BTC from the wallet and lowers the LTV', () => {
    const { book, loanId, act } = setup()
    const result = act(book, 'add_collateral', 0.5)
    expect(loanIn(result.book, loanId)).toMatchObject({ collateral: 1, ltv: 21.05 })
    expect(result.book.wallet.BTC).toBe(1)
    expect(loanIn(result.book, loanId).history.at(-1)).toMatchObject({ type: 'collateral_added', amount: 0.5, asset: 'BTC' })
  })

  it('add_collateral beyond the wallet is INSUFFICIENT_BALANCE; beyond the collateral limit INVALID_AMOUNT', () => {
    const { book, act } = setup()
    expectRejectedUnchanged(book, (b) => act(b, 'add_collateral', 1.6), 'FLOW_CONFLICT', 'INSUFFICIENT_BALANCE')
    const error = expectRejectedUnchanged(book, (b) => act(b, 'add_collateral', 99.6), 'INVALID_AMOUNT')
    expect(error.details).toMatchObject({ field: 'amount', limit: 'limits.collateral_btc.max', value: 100.1, allowed: 100 })
  })

  it('remove_collateral returns BTC while the LTV stays within the maximum', () => {
    const { book, loanId, act } = setup()
    const result = act(book, 'remove_collateral', 0.05)
    expect(loanIn(result.book, loanId)).toMatchObject({ collateral: 0.45, ltv: 46.78 })
    expect(result.book.wallet.BTC).toBe(1.55)
    expect(result.events.map((e) => e.type)).toEqual(['sandbox.loan.updated', 'sandbox.collateral.returned'])
  })

  it('remove_collateral above the maximum LTV is LTV_LIMIT, all of it too (none left against the debt); more than the loan holds is INVALID_AMOUNT', () => {
    const { book, act } = setup()
    const error = expectRejectedUnchanged(book, (b) => act(b, 'remove_collateral', 0.1), 'FLOW_CONFLICT', 'LTV_LIMIT')
    expect(error.details).toMatchObject({ ltv: 52.63, max: 50, max_removable_btc: 0.07894736 })
    const all = expectRejectedUnchanged(book, (b) => act(b, 'remove_collateral', 0.5), 'FLOW_CONFLICT', 'LTV_LIMIT')
    expect(all.details).toEqual({ reason: 'LTV_LIMIT', max: 50, max_removable_btc: 0.07894736 })
    expectRejectedUnchanged(book, (b) => act(b, 'remove_collateral', 0.50000001), 'INVALID_AMOUNT')
  })

  it('max_removable_btc is exact when the collateral needed is a whole number of satoshis', () => {
    // 3325 USDT needs 0.07 BTC at 95000 and 50%, so 0.63 of 0.7 BTC can go; floats make it 62999999.99... sats.
    const ctx = createTestContext()
    const { book, loan } = issueLoanThroughFlow(ctx, undefined, { collateral_btc: 0.7, loan_amount: 3325 })
    const error = expectRejectedUnchanged(book, (b) => directAction(b, loan.id, { action: 'remove_collateral', amount: 0.65 }, ctx), 'FLOW_CONFLICT', 'LTV_LIMIT')
    expect(error.details).toMatchObject({ max_removable_btc: 0.63 })
    expect(loanIn(directAction(book, loan.id, { action: 'remove_collateral', amount: 0.63 }, ctx).book, loan.id)).toMatchObject({ collateral: 0.07, ltv: 50 })
  })

  it('increase_loan adds debt and pays it out minus the origination fee', () => {
    const { book, loanId, act } = setup()
    const result = act(book, 'increase_loan', 3000)
    expect(loanIn(result.book, loanId)).toMatchObject({ debt: 23000, principal: 23000, ltv: 48.42, originationFee: 230 })
    expect(loanIn(result.book, loanId).history.slice(-2).map((h) => [h.type, h.amount])).toEqual([['loan_increased', 3000], ['origination_fee', 30]])
    expect(result.book.wallet.USDT).toBe(32770)
  })

  it('increase_loan above the maximum LTV is LTV_LIMIT; above the loan limit INVALID_AMOUNT', () => {
    const { book, act } = setup()
    const error = expectRejectedUnchanged(book, (b) => act(b, 'increase_loan', 4000), 'FLOW_CONFLICT', 'LTV_LIMIT')
    expect(error.details).toMatchObject({ ltv: 50.53, max: 50, max_increase: 3750 })
    const capped = setup({ ...fixtureConfig, limits: { ...fixtureConfig.limits, loan_amount: { min: 100, max: 21000 } } })
    const limit = expectRejectedUnchanged(capped.book, (b) => capped.act(b, 'increase_loan', 1500), 'INVALID_AMOUNT')
    expect(limit.details).toMatchObject({ limit: 'limits.loan_amount.max', value: 21500, allowed: 21000 })
    expect(loanIn(capped.act(capped.book, 'increase_loan', 1000).book, capped.loanId).debt).toBe(21000)
  })

  it.each([
    ['repay_interest', 250],
    ['repay_interest', 0.001],
    ['repay_principal', 20000.01],
    ['increase_loan', 10.005],
    ['add_collateral', 0],
    ['add_collateral', -1],
  ])('%s with amount %s is INVALID_AMOUNT', (action, amount) => {
    const { book, act } = setup()
    expect(expectRejectedUnchanged(book, (b) => act(b, action, amount), 'INVALID_AMOUNT').details).toMatchObject({ field: 'amount' })
  })

  it('an unknown loan is LOAN_NOT_FOUND and a closed one LOAN_NOT_ACTIVE', () => {
    const { book, loanId, act, ctx } = setup()
    expectRejectedUnchanged(book, (b) => directAction(b, 'loan_missing', { action: 'add_collateral', amount: 0.1 }, ctx), 'LOAN_NOT_FOUND')
    const closed = act(book, 'repay_principal', 20000).book
    expectRejectedUnchanged(closed, (b) => directAction(b, loanId, { action: 'add_collateral', amount: 0.1 }, ctx), 'FLOW_CONFLICT', 'LOAN_NOT_ACTIVE')
  })

  it('every direct action waits while a repayment operation is open on the loan', () => {
    const { book, loanId, ctx, act } = setup()
    const open = repaymentStep(book, loanId, { action: 'start_payment', repayment_kind: 'interest' }, ctx).book
    for (const action of ['repay_interest', 'repay_principal', 'add_collateral', 'remove_collateral', 'increase_loan']) {
      const error = expectRejectedUnchanged(open, (b) => act(b, action, 0.01), 'FLOW_CONFLICT', 'OPERATION_IN_PROGRESS')
      expect(error.details).toMatchObject({ current_status: 'awaiting_payment', expected_action: 'confirm_usdt' })
    }
  })
})
