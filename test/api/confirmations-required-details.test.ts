import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, issueLoan, LOAN, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

describe('a confirm step without confirmations', () => {
  it('says in details, as in the message, that confirmations is required (confirm_btc)', async () => {
    api = await createTestApi()
    await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', ...LOAN })
    const { status, body } = await api.post('/api/sandbox/loans/flow', { action: 'confirm_btc', tx_hash: `tx_${randomUUID()}` })
    expect(status).toBe(400)
    expect(body.error_code).toBe('INVALID_REQUEST')
    expect(body.error).toBe('confirmations is required.')
    expect(body.details).toEqual({ field: 'confirmations', issue: 'is required' })
  })

  it('says the same for confirm_usdt', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const path = `/api/sandbox/loans/${loanId}/repayment-flow`
    const started = await api.post(path, { action: 'start_payment', repayment_kind: 'interest' })
    const operationId = started.body.sandboxFlow.repaymentOperations.at(-1).operation_id
    const { status, body } = await api.post(path, { action: 'confirm_usdt', operation_id: operationId, tx_hash: 'tx_1' })
    expect(status).toBe(400)
    expect(body.details).toEqual({ field: 'confirmations', issue: 'is required' })
  })
})
