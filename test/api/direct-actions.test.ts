import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, issueLoan, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

const action = (loanId: string) => `/api/sandbox/loans/${loanId}/action`

describe('POST /api/sandbox/loans/{id}/action', () => {
  it('repays interest', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const answer = await api.post(action(loanId), { action: 'repay_interest', amount: 50 })
    expect(answer.status).toBe(200)
    expect(answer.body.activeLoans[0].interestDue).toBe(150)
    expect(answer.body.wallet.USDT).toBe(29750)
    const tooMuch = await api.post(action(loanId), { action: 'repay_interest', amount: 1000 })
    expect(tooMuch.body.error_code).toBe('INVALID_AMOUNT')
  })

  it('repays principal and closes the loan when it reaches zero', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const part = await api.post(action(loanId), { action: 'repay_principal', amount: 5000 })
    expect(part.body.activeLoans[0].debt).toBe(15000)
    const rest = await api.post(action(loanId), { action: 'repay_principal', amount: 15000 })
    expect(rest.status).toBe(200)
    expect(rest.body.activeLoans).toHaveLength(0)
    expect(rest.body.loanHistory[0]).toMatchObject({ id: loanId, status: 'closed' })
    expect(rest.body.wallet.BTC).toBe(2)
    const closed = await api.post(action(loanId), { action: 'add_collateral', amount: 0.1 })
    expect(closed.status).toBe(409)
    expect(closed.body.details.reason).toBe('LOAN_NOT_ACTIVE')
  })

  it('adds and removes collateral within the LTV limit', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const added = await api.post(action(loanId), { action: 'add_collateral', amount: 0.5 })
    expect(added.body.activeLoans[0]).toMatchObject({ collateral: 1, ltv: 21.05 })
    expect(added.body.wallet.BTC).toBe(1)
    const removed = await api.post(action(loanId), { action: 'remove_collateral', amount: 0.4 })
    expect(removed.body.activeLoans[0].collateral).toBe(0.6)
    expect(removed.body.wallet.BTC).toBe(1.4)
    const risky = await api.post(action(loanId), { action: 'remove_collateral', amount: 0.3 })
    expect(risky.status).toBe(409)
    expect(risky.body.details.reason).toBe('LTV_LIMIT')
    const broke = await api.post(action(loanId), { action: 'add_collateral', amount: 50 })
    expect(broke.status).toBe(409)
    expect(broke.body.details.reason).toBe('INSUFFICIENT_BALANCE')
  })

  it('refuses removing all the collateral of a loan that owes as the LTV rule does (decisions.md: 409 LTV_LIMIT), and more than it holds as an invalid amount', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const all = await api.post(action(loanId), { action: 'remove_collateral', amount: 0.5 }, { idempotencyKey: 'all' })
    expect([all.status, all.body.error_code, all.body.details]).toEqual([409, 'FLOW_CONFLICT', { reason: 'LTV_LIMIT', max: 50, max_removable_btc: 0.07894736 }])
    expect(all.body.error).toBe('This change would leave no collateral against a debt of 20000, above the maximum LTV of 50%.')
    // Stored as every 409 is: the same key answers the same.
    expect((await api.post(action(loanId), { action: 'remove_collateral', amount: 0.5 }, { idempotencyKey: 'all' })).body.idempotency_replayed).toBe(true)
    const more = await api.post(action(loanId), { action: 'remove_collateral', amount: 0.50000001 })
    expect([more.status, more.body.error_code, more.body.details.allowed]).toEqual([400, 'INVALID_AMOUNT', 0.5])
    expect((await api.get('/api/sandbox/loans')).body.activeLoans[0].collateral).toBe(0.5)
  })

  it('names, in the 400 for removing more than the loan holds, the collateral that may go, and that much passes', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const more = await api.post(action(loanId), { action: 'remove_collateral', amount: 0.6 })
    expect([more.status, more.body.error_code, more.body.details.max_removable_btc]).toEqual([400, 'INVALID_AMOUNT', 0.07894736])
    const named = await api.post(action(loanId), { action: 'remove_collateral', amount: more.body.details.max_removable_btc })
    expect([named.status, named.body.activeLoans[0].collateral]).toEqual([200, 0.42105264])
  })

  it('names, in the 400 for an increase over limits.loan_amount.max, an increase that passes both the limit and the LTV', async () => {
    api = await createTestApi({ config: { limits: { loan_amount: { min: 100, max: 21_000 } } } })
    const loanId = await issueLoan(api)
    const over = await api.post(action(loanId), { action: 'increase_loan', amount: 2000 })
    expect([over.status, over.body.details.limit, over.body.details.max_increase]).toEqual([400, 'limits.loan_amount.max', 1000])
    const named = await api.post(action(loanId), { action: 'increase_loan', amount: over.body.details.max_increase })
    expect([named.status, named.body.activeLoans[0].debt]).toEqual([200, 21_000])

    await api.sandbox.close()
    api = await createTestApi({ config: { limits: { loan_amount: { min: 100, max: 30_000 } } } })
    const other = await issueLoan(api)
    const far = await api.post(action(other), { action: 'increase_loan', amount: 20_000 })
    // 3,750 more reaches 50 % LTV on 0.5 BTC before the 30,000 limit: the LTV rule would refuse 10,000.
    expect([far.status, far.body.details.limit, far.body.details.max_increase]).toEqual([400, 'limits.loan_amount.max', 3750])
    const passes = await api.post(action(other), { action: 'increase_loan', amount: far.body.details.max_increase })
    expect([passes.status, passes.body.activeLoans[0].debt]).toEqual([200, 23_750])
  })

  it('names, in the 400 for add_collateral over limits.collateral_btc.max, the collateral that may still be added, and that much passes', async () => {
    api = await createTestApi({ config: { limits: { collateral_btc: { min: 0.001, max: 0.8 } } } })
    const loanId = await issueLoan(api)
    const over = await api.post(action(loanId), { action: 'add_collateral', amount: 0.5 })
    // value and allowed are totals (1 BTC against 0.8), not amounts one could send.
    expect([over.status, over.body.details.limit, over.body.details.allowed, over.body.details.max_addable_btc]).toEqual([400, 'limits.collateral_btc.max', 0.8, 0.3])
    const named = await api.post(action(loanId), { action: 'add_collateral', amount: over.body.details.max_addable_btc })
    expect([named.status, named.body.activeLoans[0].collateral]).toEqual([200, 0.8])
  })

  it('increases the loan, charging the origination fee, up to the LTV limit', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const more = await api.post(action(loanId), { action: 'increase_loan', amount: 1000 })
    expect(more.body.activeLoans[0].debt).toBe(21000)
    expect(more.body.wallet.USDT).toBe(29800 + 990)
    const tooMuch = await api.post(action(loanId), { action: 'increase_loan', amount: 10000 })
    expect(tooMuch.status).toBe(409)
    expect(tooMuch.body.details.reason).toBe('LTV_LIMIT')
  })

  it('validates the action and amount, and answers 404 for another key\'s loan', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    expect((await api.post(action(loanId), { action: 'refinance', amount: 1 })).body.error_code).toBe('INVALID_ACTION')
    expect((await api.post(action(loanId), { action: 'repay_interest', amount: 0 })).body.error_code).toBe('INVALID_AMOUNT')
    expect((await api.post(action(loanId), { action: 'repay_interest' })).body.error_code).toBe('INVALID_AMOUNT')
    const missing = await api.post(action('loan_unknown'), { action: 'repay_interest', amount: 1 })
    expect(missing.status).toBe(404)
    expect(missing.body.error_code).toBe('LOAN_NOT_FOUND')
    // The id as the client wrote it, not as the URL carried it.
    const encoded = await api.post(action(encodeURIComponent('loan x/y')), { action: 'repay_interest', amount: 1 })
    expect(encoded.body.error).toContain('loan x/y')
  })

  it('checks a USDT amount\'s decimals before the loan, and does not store that 400', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const started = await api.post(`/api/sandbox/loans/${loanId}/repayment-flow`, { action: 'start_payment', repayment_kind: 'interest' })
    expect(started.status).toBe(200)
    const loans: Array<[string, string]> = [['loan_unknown', 'unknown loan'], [loanId, 'loan with an open operation']]
    for (const [id, name] of loans) {
      for (const kind of ['increase_loan', 'repay_interest', 'repay_principal']) {
        const answer = await api.post(action(id), { action: kind, amount: 10.001 }, { idempotencyKey: `dec-${kind}-${id}` })
        expect({ name, kind, status: answer.status, code: answer.body.error_code }).toEqual({ name, kind, status: 400, code: 'INVALID_AMOUNT' })
      }
    }
    const corrected = await api.post(action('loan_unknown'), { action: 'increase_loan', amount: 10 }, { idempotencyKey: 'dec-increase_loan-loan_unknown' })
    expect(corrected.body.error_code).toBe('LOAN_NOT_FOUND')
  })
})
