import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi | undefined
afterEach(async () => api?.sandbox.close())

const start = { action: 'start_collateral_transfer', collateral_btc: 0.1, loan_amount: 1000 }
const confirm = { action: 'confirm_btc', tx_hash: 'tx_1', confirmations: 2 }

describe('the deal grouping fields of a loan issued through the flow', () => {
  it('refuses a later step that brings an external_client_id the application was not started with, instead of dropping it', async () => {
    api = await createTestApi()
    await api.post('/api/sandbox/loans/flow', start)
    await api.post('/api/sandbox/loans/flow', confirm)
    await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' })
    const late = await api.post('/api/sandbox/loans/flow', { action: 'complete_payout', external_client_id: 'client-late' }, { idempotencyKey: 'payout-1' })
    expect(late.status).toBe(400)
    expect(late.body).toMatchObject({ error_code: 'INVALID_REQUEST', details: { field: 'external_client_id', application_value: null } })
    expect(late.body.error).toContain('start_collateral_transfer')
    expect((await api.get('/api/sandbox/loans')).body.draft.status).toBe('kyt_completed')

    // Not stored under its Idempotency-Key: the step without the field is taken on the same key.
    const payout = await api.post('/api/sandbox/loans/flow', { action: 'complete_payout' }, { idempotencyKey: 'payout-1' })
    expect(payout.status).toBe(200)
    expect((await api.get('/api/sandbox/partner')).body.links[0].deals).toEqual([])
  })

  it('takes the same values repeated on every step, and refuses another client_reference', async () => {
    api = await createTestApi()
    const grouping = { external_client_id: 'client-7', client_reference: 'ref-1' }
    expect((await api.post('/api/sandbox/loans/flow', { ...start, ...grouping })).status).toBe(200)
    const other = await api.post('/api/sandbox/loans/flow', { ...confirm, ...grouping, client_reference: 'ref-2' })
    expect([other.status, other.body.details?.field, other.body.details?.application_value]).toEqual([400, 'client_reference', 'ref-1'])
    for (const step of [confirm, { action: 'run_kyt' }, { action: 'complete_payout' }]) {
      expect((await api.post('/api/sandbox/loans/flow', { ...step, ...grouping })).status).toBe(200)
    }
    const deals = (await api.get('/api/sandbox/partner')).body.links[0].deals
    expect(deals.map((deal: { external_client_id: string; client_reference: string; loans: unknown[] }) => [deal.external_client_id, deal.client_reference, deal.loans.length])).toEqual([['client-7', 'ref-1', 1]])
  })

  it('still answers a step out of order with 409 FLOW_CONFLICT, whatever grouping fields it carries', async () => {
    api = await createTestApi()
    await api.post('/api/sandbox/loans/flow', start)
    const early = await api.post('/api/sandbox/loans/flow', { action: 'complete_payout', external_client_id: 'client-late' })
    expect([early.status, early.body.details?.reason]).toEqual([409, 'STEP_OUT_OF_ORDER'])
  })
})
