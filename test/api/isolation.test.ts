import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, issueLoan, newKey, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

describe('per-key isolation', () => {
  it('gives every key its own wallet, loans and drafts', async () => {
    api = await createTestApi()
    const alice = newKey('alice')
    const bob = newKey('bob')
    const loanId = await issueLoan(api, alice)
    await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.2, loan_amount: 1000 }, { key: bob })

    const aliceState = (await api.get('/api/sandbox/loans', alice)).body
    const bobState = (await api.get('/api/sandbox/loans', bob)).body
    expect(aliceState.activeLoans.map((loan: { id: string }) => loan.id)).toEqual([loanId])
    expect(aliceState.draft).toBeNull()
    expect(bobState.activeLoans).toEqual([])
    expect(bobState.draft.status).toBe('awaiting_collateral')
    expect(bobState.wallet).toEqual({ BTC: 2, USDT: 10000 })

    const foreign = await api.post(`/api/sandbox/loans/${loanId}/action`, { action: 'repay_interest', amount: 10 }, { key: bob })
    expect(foreign.status).toBe(404)
    expect(foreign.body.error_code).toBe('LOAN_NOT_FOUND')
    const foreignRepay = await api.post(`/api/sandbox/loans/${loanId}/repayment-flow`, { action: 'start_payment', repayment_kind: 'interest' }, { key: bob })
    expect(foreignRepay.status).toBe(404)
  })

  it('derives different deterministic wallet addresses per key', async () => {
    api = await createTestApi()
    const first = await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.2, loan_amount: 1000 }, { key: newKey('a') })
    const second = await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.2, loan_amount: 1000 }, { key: newKey('b') })
    expect(first.body.draft.wallets.collateralDeposit.address).not.toBe(second.body.draft.wallets.collateralDeposit.address)
  })
})
