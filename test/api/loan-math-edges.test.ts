import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

// Edges of the loan math as a partner sees them: the README's "Loan math" examples, the exact
// satoshi a refusal names, and amounts too large for any limit.
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

describe('remove_collateral refusal names the exact BTC that may go', () => {
  it('counts the last satoshi when the collateral needed is a whole number of satoshis', async () => {
    api = await createTestApi()
    // 2196.40 USDT at 50% of 95,000 USD/BTC needs exactly 0.04624 BTC: 21 satoshis may go.
    const created = await api.post('/api/sandbox/loans', { collateral_btc: 0.04624021, loan_amount: 2196.4 })
    const loanId = created.body.activeLoans[0].id
    const path = `/api/sandbox/loans/${loanId}/action`
    const refused = await api.post(path, { action: 'remove_collateral', amount: 0.001 })
    expect([refused.status, refused.body.details.reason, refused.body.details.max_removable_btc]).toEqual([409, 'LTV_LIMIT', 0.00000021])
    const tooMuch = await api.post(path, { action: 'remove_collateral', amount: 0.00000022 })
    expect([tooMuch.status, tooMuch.body.details.max_removable_btc]).toEqual([409, 0.00000021])
    const removed = await api.post(path, { action: 'remove_collateral', amount: 0.00000021 })
    expect([removed.status, removed.body.activeLoans[0].collateral, removed.body.activeLoans[0].ltv]).toEqual([200, 0.04624, 50])
  })
})

describe('the maximum LTV holds to the last cent and satoshi at a BTC price with cents', () => {
  // At 95,000.01 USD/BTC, 0.09499999 BTC carries at most 4,512.49 at 50 %: 4,512.50 is above the
  // maximum by only 5.5e-13 %, and decisions.md ("Loan math") allows an LTV at most the maximum.
  it('refuses a new loan, an increase and a removal that go one unit over', async () => {
    api = await createTestApi({ config: { rates: { btc_usd: 95000.01 } } })
    const over = await api.post('/api/sandbox/loans', { collateral_btc: 0.09499999, loan_amount: 4512.5 })
    expect([over.status, over.body.details?.limit, over.body.details?.max_loan_amount]).toEqual([400, 'risk.max_ltv_percent', 4512.49])

    const atMax = await api.post('/api/sandbox/loans', { collateral_btc: 0.09499999, loan_amount: 4512.49 })
    const increase = await api.post(`/api/sandbox/loans/${atMax.body.activeLoans[0].id}/action`, { action: 'increase_loan', amount: 0.01 })
    expect([increase.status, increase.body.details?.reason, increase.body.details?.max_increase]).toEqual([409, 'LTV_LIMIT', 0])

    // 0.095 BTC carries 4,512.50 (4,512.500475 at most); one satoshi less does not.
    const loan = await api.post('/api/sandbox/loans', { collateral_btc: 0.095, loan_amount: 4512.5 })
    const remove = await api.post(`/api/sandbox/loans/${loan.body.activeLoans.at(-1).id}/action`, { action: 'remove_collateral', amount: 0.00000001 })
    expect([remove.status, remove.body.details?.reason, remove.body.details?.max_removable_btc]).toEqual([409, 'LTV_LIMIT', 0])
  })
})

describe('an amount too large for any limit is reported as sent', () => {
  it('names the number in details.value and the message, not null or Infinity', async () => {
    api = await createTestApi()
    const create = await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1e308 })
    expect([create.status, create.body.error_code, create.body.details.limit, create.body.details.value]).toEqual([400, 'INVALID_AMOUNT', 'limits.loan_amount.max', 1e308])
    const collateral = await api.post('/api/sandbox/loans', { collateral_btc: 1e307, loan_amount: 100 })
    expect([collateral.status, collateral.body.details.limit, collateral.body.details.value]).toEqual([400, 'limits.collateral_btc.max', 1e307])

    const loanId = (await api.post('/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 1000 })).body.activeLoans[0].id
    const increase = await api.post(`/api/sandbox/loans/${loanId}/action`, { action: 'increase_loan', amount: 1e308 })
    expect([increase.status, increase.body.details.limit, increase.body.details.value]).toEqual([400, 'limits.loan_amount.max', 1e308])
    expect(increase.body.error).toBe('Debt would be 1e+308, above limits.loan_amount.max (1000000).')
    const add = await api.post(`/api/sandbox/loans/${loanId}/action`, { action: 'add_collateral', amount: 1e308 })
    expect([add.status, add.body.details.limit, add.body.details.value]).toEqual([400, 'limits.collateral_btc.max', 1e308])
    expect(add.body.error).not.toContain('Infinity')
  })
})
