import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => {
  await api?.sandbox.close()
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
