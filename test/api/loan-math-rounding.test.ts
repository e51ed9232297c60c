import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

// The README's "Loan math" examples, as a partner sees them.
let api: TestApi
afterEach(async () => {
  await api?.sandbox.close()
})

describe('loan math rounding, as the README states it', () => {
  it('rounds the fee and the interest once, half up', async () => {
    api = await createTestApi()
    const answer = await api.post('/api/sandbox/loans', { collateral_btc: 0.01, loan_amount: 150.5 })
    // 1 % of 150.50 is 1.505 and 12 % / 12 of it is 1.505 too: both 1.51; 10,000 + 150.50 - 1.51 paid out.
    expect(answer.body.activeLoans[0]).toMatchObject({ originationFee: 1.51, interestDue: 1.51, ltv: 15.84 })
    expect(answer.body.wallet.USDT).toBe(10_148.99)
  })

  it('judges the maximum LTV on the unrounded figure', async () => {
    api = await createTestApi()
    const over = await api.post('/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 23_750.01 })
    expect([over.status, over.body.details.limit, over.body.details.value]).toEqual([400, 'risk.max_ltv_percent', 50.01])
    const at = await api.post('/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 23_750 })
    expect([at.status, at.body.activeLoans[0].ltv]).toEqual([200, 50])
  })

  it('keeps the interest due of the running period when principal is repaid or added', async () => {
    api = await createTestApi()
    const loanId = (await api.post('/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 10_000 })).body.activeLoans[0].id
    const act = (action: string, amount: number) => api.post(`/api/sandbox/loans/${loanId}/action`, { action, amount })
    expect((await act('repay_principal', 4000)).body.activeLoans[0]).toMatchObject({ debt: 6000, interestDue: 100 })
    expect((await act('increase_loan', 1000)).body.activeLoans[0]).toMatchObject({ debt: 7000, interestDue: 100 })
    // Paying it makes the next period's interest due, on the debt now: 7,000 × 1 %.
    expect((await act('repay_interest', 100)).body.activeLoans[0]).toMatchObject({ debt: 7000, interestDue: 70 })
  })
})
