import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => {
  await api?.sandbox.close()
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
