import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, issueLoan, LOAN, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

const FLOW = '/api/sandbox/loans/flow'
const confirm = { action: 'confirm_btc', tx_hash: 'tx_abc', confirmations: 6 }

describe('POST /api/sandbox/loans/flow', () => {
  it('walks the four steps to an active loan with exact figures', async () => {
    api = await createTestApi()
    const start = await api.post(FLOW, { action: 'start_collateral_transfer', ...LOAN, external_client_id: 'client-1' })
    expect(start.status).toBe(200)
    expect(start.body.idempotency_replayed).toBe(false)
    const draft = start.body.draft
    expect(draft.status).toBe('awaiting_collateral')
    expect(draft.id).toMatch(/^app_/)
    expect(draft.wallets.collateralDeposit).toMatchObject({ asset: 'BTC', chainCode: 'sandbox', isRealWallet: false, confirmationMode: 'api_action' })
    expect(draft.wallets.loanPayout.asset).toBe('USDT')
    expect(draft.wallets.collateralReturn.asset).toBe('BTC')
    expect(start.body.sandboxFlow.loanApplications).toHaveLength(1)

    const confirmed = await api.post(FLOW, confirm)
    expect(confirmed.body.draft.status).toBe('collateral_confirmed')
    expect(confirmed.body.wallet.BTC).toBe(1.5)
    const kyt = await api.post(FLOW, { action: 'run_kyt' })
    expect(kyt.body.draft.status).toBe('kyt_completed')
    const payout = await api.post(FLOW, { action: 'complete_payout' })
    expect(payout.status).toBe(200)
    expect(payout.body.draft).toBeNull()
    expect(payout.body.wallet).toEqual({ BTC: 1.5, USDT: 29800 })
    const [loan] = payout.body.activeLoans
    expect(loan).toMatchObject({ status: 'active', debt: 20000, collateral: 0.5, ltv: 42.11, interestDue: 200, currency: 'USDT' })
    expect(loan.id).toMatch(/^loan_/)
    expect(loan.history.length).toBeGreaterThan(0)
    expect(payout.body.sandboxFlow.loanApplications[0]).toMatchObject({ status: 'completed', loan_id: loan.id })

    const state = await api.get('/api/sandbox/state')
    expect(state.body.loans.activeLoans[0].id).toBe(loan.id)
    expect(state.body.partner.profile).toBeDefined()
    expect(state.body.loans).not.toHaveProperty('idempotency_replayed')
    const loans = await api.get('/api/sandbox/loans')
    expect(loans.body).not.toHaveProperty('partner')
    expect(loans.body).not.toHaveProperty('idempotency_replayed')
  })

  it('answers every step out of order with 409 FLOW_CONFLICT and leaves the state exactly as it was', async () => {
    api = await createTestApi()
    const sequence = [{ action: 'start_collateral_transfer', ...LOAN }, confirm, { action: 'run_kyt' }, { action: 'complete_payout' }]
    for (let done = 0; done <= sequence.length; done++) {
      // At each point, every step except the next valid one must be refused.
      for (let index = 0; index < sequence.length; index++) {
        if (index === done % sequence.length && done < sequence.length) continue
        if (done === sequence.length && index === 0) continue
        const before = await api.get('/api/sandbox/loans')
        const answer = await api.post(FLOW, sequence[index])
        expect(answer.status, `step ${index} after ${done} steps`).toBe(409)
        expect(answer.body.error_code).toBe('FLOW_CONFLICT')
        expect(answer.body.details.reason).toEqual(expect.any(String))
        const after = await api.get('/api/sandbox/loans')
        const { request_id: _a, ...beforeBody } = before.body
        const { request_id: _b, ...afterBody } = after.body
        expect(afterBody).toEqual(beforeBody)
      }
      if (done < sequence.length) expect((await api.post(FLOW, sequence[done])).status).toBe(200)
    }
  })

  it('refuses a second draft while one is open', async () => {
    api = await createTestApi()
    await api.post(FLOW, { action: 'start_collateral_transfer', ...LOAN })
    const again = await api.post(FLOW, { action: 'start_collateral_transfer', ...LOAN })
    expect(again.status).toBe(409)
    expect(again.body.details.reason).toBe('DRAFT_ALREADY_OPEN')
  })

  it('validates actions, amounts and limits with the spec codes', async () => {
    api = await createTestApi()
    const unknown = await api.post(FLOW, { action: 'teleport' })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error_code).toBe('INVALID_ACTION')
    const empty = await api.post(FLOW)
    expect(empty.body.error_code).toBe('INVALID_ACTION')
    const text = await api.post(FLOW, { action: 'start_collateral_transfer', collateral_btc: '0.5', loan_amount: 20000 })
    expect(text.status).toBe(400)
    expect(text.body.error_code).toBe('INVALID_AMOUNT')
    const missing = await api.post(FLOW, { action: 'start_collateral_transfer', collateral_btc: 0.5 })
    expect(missing.body.error_code).toBe('INVALID_AMOUNT')
    const tooRisky = await api.post(FLOW, { action: 'start_collateral_transfer', collateral_btc: 0.1, loan_amount: 20000 })
    expect(tooRisky.status).toBe(400)
    expect(tooRisky.body.error_code).toBe('INVALID_AMOUNT')
    expect(JSON.stringify(tooRisky.body.details)).toContain('max_ltv_percent')
    const tiny = await api.post(FLOW, { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 1 })
    expect(JSON.stringify(tiny.body.details)).toContain('loan_amount')
    const currency = await api.post(FLOW, { action: 'start_collateral_transfer', ...LOAN, loan_currency: 'EUR' })
    expect(currency.status).toBe(400)
    expect(currency.body.error_code).toBe('INVALID_REQUEST')
  })

  it('checks confirm_btc fields and confirmations', async () => {
    api = await createTestApi()
    await api.post(FLOW, { action: 'start_collateral_transfer', ...LOAN })
    const noHash = await api.post(FLOW, { action: 'confirm_btc', confirmations: 6 })
    expect(noHash.status).toBe(400)
    expect(noHash.body.error_code).toBe('INVALID_REQUEST')
    const few = await api.post(FLOW, { action: 'confirm_btc', tx_hash: 'tx', confirmations: 1 })
    expect(few.status).toBe(409)
    expect(few.body.details.reason).toBe('INSUFFICIENT_CONFIRMATIONS')
  })

  it('answers 404 LOAN_NOT_FOUND for an unknown application id', async () => {
    api = await createTestApi()
    const answer = await api.post(FLOW, { action: 'run_kyt', application_id: 'app_missing' })
    expect(answer.status).toBe(404)
    expect(answer.body.error_code).toBe('LOAN_NOT_FOUND')
  })

  it('checks a step\'s own fields before the application_id it names (README: order of checks)', async () => {
    api = await createTestApi()
    const unknown = await api.post(FLOW, { action: 'confirm_btc', confirmations: 6, application_id: 'app_missing' })
    expect([unknown.status, unknown.body.error_code, unknown.body.details.field]).toEqual([400, 'INVALID_REQUEST', 'tx_hash'])
    const start = await api.post(FLOW, { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 50, application_id: 'app_missing' })
    expect([start.status, start.body.error_code, start.body.details.limit]).toEqual([400, 'INVALID_AMOUNT', 'limits.loan_amount.min'])
    // However large, a whole amount is judged against its limit (decisions.md: details name it).
    const huge = await api.post(FLOW, { action: 'start_collateral_transfer', collateral_btc: 1e308, loan_amount: 1000 })
    expect([huge.status, huge.body.error_code, huge.body.details.limit]).toEqual([400, 'INVALID_AMOUNT', 'limits.collateral_btc.max'])
    // Naming an application that is not the open draft: the same 400, not a 409 stored under the
    // Idempotency-Key, so the corrected step can reuse the key (decisions.md: 400s are not stored).
    await issueLoan(api)
    const done = (await api.get('/api/sandbox/loans')).body.sandboxFlow.loanApplications[0].id
    const open = (await api.post(FLOW, { action: 'start_collateral_transfer', ...LOAN })).body.draft.id
    const stale = await api.post(FLOW, { action: 'confirm_btc', confirmations: 6, application_id: done }, { idempotencyKey: 'fix-me' })
    expect([stale.status, stale.body.error_code]).toEqual([400, 'INVALID_REQUEST'])
    const corrected = await api.post(FLOW, { ...confirm, application_id: open }, { idempotencyKey: 'fix-me' })
    expect([corrected.status, corrected.body.draft?.status]).toEqual([200, 'collateral_confirmed'])
  })

  it('creates a loan directly with POST /loans', async () => {
    api = await createTestApi()
    const created = await api.post('/api/sandbox/loans', { ...LOAN, client_reference: 'ref-9' })
    expect(created.status).toBe(200)
    expect(created.body.activeLoans).toHaveLength(1)
    expect(created.body.activeLoans[0]).toMatchObject({ debt: 20000, collateral: 0.5, client_reference: 'ref-9' })
    expect(created.body.wallet).toEqual({ BTC: 1.5, USDT: 29800 })
    expect(created.body.draft).toBeNull()
    const invalid = await api.post('/api/sandbox/loans', { collateral_btc: -1, loan_amount: 100 })
    expect(invalid.body.error_code).toBe('INVALID_AMOUNT')
  })

  it('refuses collateral the wallet does not hold with 409 INSUFFICIENT_BALANCE', async () => {
    api = await createTestApi()
    const answer = await api.post('/api/sandbox/loans', { collateral_btc: 5, loan_amount: 20000 })
    expect(answer.status).toBe(409)
    expect(answer.body.details.reason).toBe('INSUFFICIENT_BALANCE')
  })

  it('issues several loans one after another', async () => {
    api = await createTestApi()
    const first = await issueLoan(api)
    const second = await issueLoan(api, api.key, { collateral_btc: 0.2, loan_amount: 5000 })
    expect(first).not.toBe(second)
    const { body } = await api.get('/api/sandbox/loans')
    expect(body.activeLoans.map((loan: { id: string }) => loan.id)).toEqual([first, second])
  })
})
