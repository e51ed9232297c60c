import { describe, expect, it } from 'vitest'
import { createLoanBook, viewLoanState } from '../../src/domain/loan-book.js'
import { createTestContext, directAction, issueLoanThroughFlow } from './domain-helpers.js'

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
})
