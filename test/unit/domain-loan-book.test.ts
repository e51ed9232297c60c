import { describe, expect, it } from 'vitest'
import { createLoanBook, revalueActiveLoans, viewLoanState } from '../../src/domain/loan-book.js'
import { createTestContext, directAction, fixtureConfig, issueLoanThroughFlow } from './domain-helpers.js'

describe('loan book', () => {
  it('starts a key from the given balances with nothing open', () => {
    expect(viewLoanState(createLoanBook({ BTC: 2, USDT: 10000 }))).toEqual({
      wallet: { BTC: 2, USDT: 10000 },
      activeLoans: [],
      loanHistory: [],
      draft: null,
      sandboxFlow: { loanApplications: [], repaymentOperations: [] },
    })
  })

  it('lists closed loans in loanHistory and active ones in activeLoans', () => {
    const ctx = createTestContext()
    const first = issueLoanThroughFlow(ctx)
    const second = issueLoanThroughFlow(ctx, first.book, { collateral_btc: 0.2, loan_amount: 1000 })
    const closed = directAction(second.book, second.loan.id, { action: 'repay_principal', amount: 1000 }, ctx).book
    const view = viewLoanState(closed)
    expect(view.activeLoans.map((l) => l.id)).toEqual([first.loan.id])
    expect(view.loanHistory.map((l) => [l.id, l.status])).toEqual([[second.loan.id, 'closed']])
    expect(view.sandboxFlow.loanApplications.map((a) => a.status)).toEqual(['completed', 'completed'])
  })

  it('revalues active loans at another BTC price and keeps closed ones', () => {
    const ctx = createTestContext()
    const first = issueLoanThroughFlow(ctx)
    const second = issueLoanThroughFlow(ctx, first.book, { collateral_btc: 0.2, loan_amount: 1000 })
    const book = directAction(second.book, second.loan.id, { action: 'repay_principal', amount: 1000 }, ctx).book
    expect(revalueActiveLoans(book, fixtureConfig)).toBe(book)
    const halved = { ...fixtureConfig, rates: { ...fixtureConfig.rates, btc_usd: fixtureConfig.rates.btc_usd / 2 } }
    const revalued = revalueActiveLoans(book, halved)
    const [active, closed] = [revalued.loans.find((loan) => loan.id === first.loan.id)!, revalued.loans.find((loan) => loan.id === second.loan.id)!]
    expect(active.ltv).toBeCloseTo(first.loan.ltv * 2, 1)
    expect(closed).toBe(book.loans.find((loan) => loan.id === second.loan.id))
    expect(book.loans.find((loan) => loan.id === first.loan.id)!.ltv).toBe(first.loan.ltv)
  })
})
