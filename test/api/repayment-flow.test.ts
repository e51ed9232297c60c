import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, issueLoan, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

const usdt = { tx_hash: 'tx_usdt', confirmations: 12 }

async function repay(loanId: string, start: Record<string, unknown>) {
  const path = `/api/sandbox/loans/${loanId}/repayment-flow`
  const started = await api.post(path, { action: 'start_payment', ...start })
  expect(started.status, JSON.stringify(started.body)).toBe(200)
  const operation = started.body.sandboxFlow.repaymentOperations.at(-1)
  const operation_id = operation.operation_id as string
  const answers = [started]
  for (const step of [{ action: 'confirm_usdt', ...usdt }, { action: 'run_kyt' }, { action: 'complete_settlement' }]) {
    const answer = await api.post(path, { ...step, operation_id })
    expect(answer.status, `${step.action}: ${JSON.stringify(answer.body)}`).toBe(200)
    answers.push(answer)
  }
  return { path, operation_id, operation, answers }
}

describe('POST /api/sandbox/loans/{id}/repayment-flow', () => {
  it('pays interest and makes the next period due', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const { answers, operation } = await repay(loanId, { repayment_kind: 'interest' })
    expect(operation).toMatchObject({ status: 'awaiting_payment', repayment_kind: 'interest', amount: 200, loan_id: loanId })
    expect(operation.operation_id).toEqual(expect.any(String))
    expect(operation.wallets.repayment.asset).toBe('USDT')
    expect(operation.wallets.collateralReturn).toBeNull()
    const settled = answers.at(-1)!.body
    expect(settled.sandboxFlow.repaymentOperations[0].status).toBe('settled')
    expect(settled.wallet.USDT).toBe(29600)
    expect(settled.activeLoans[0]).toMatchObject({ debt: 20000, interestDue: 200 })
  })

  it('reduces the debt with a partial principal repayment', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const { answers } = await repay(loanId, { repayment_kind: 'partial_principal', amount: 5000 })
    const loan = answers.at(-1)!.body.activeLoans[0]
    expect(loan.debt).toBe(15000)
    expect(loan.ltv).toBe(31.58)
    expect(answers.at(-1)!.body.wallet.USDT).toBe(24800)
  })

  it('repays in full, returns the collateral and closes the loan', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const { path, operation_id, operation, answers } = await repay(loanId, { repayment_kind: 'full_principal' })
    expect(operation.amount).toBe(20200)
    expect(operation.wallets.collateralReturn.asset).toBe('BTC')
    expect(answers.at(-1)!.body.activeLoans[0].debt).toBe(0)
    const returned = await api.post(path, { action: 'complete_collateral_return', operation_id })
    expect(returned.status).toBe(200)
    expect(returned.body.activeLoans).toHaveLength(0)
    expect(returned.body.loanHistory[0]).toMatchObject({ id: loanId, status: 'closed' })
    expect(returned.body.loanHistory[0].history.map((entry: { type: string }) => entry.type)).toContain('collateral_returned')
    expect(returned.body.wallet).toEqual({ BTC: 2, USDT: 9600 })
    expect(returned.body.sandboxFlow.repaymentOperations[0].status).toBe('collateral_returned')
    const after = await api.post(path, { action: 'start_payment', repayment_kind: 'interest' })
    expect(after.status).toBe(409)
  })

  it('accepts full_repayment: true as full_principal', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const { operation } = await repay(loanId, { full_repayment: true })
    expect(operation.repayment_kind).toBe('full_principal')
  })

  it('refuses every step out of order with 409 and leaves the state unchanged', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const path = `/api/sandbox/loans/${loanId}/repayment-flow`
    const started = await api.post(path, { action: 'start_payment', repayment_kind: 'full_principal' })
    const operation_id = started.body.sandboxFlow.repaymentOperations[0].operation_id
    const steps = [
      { action: 'confirm_usdt', ...usdt, operation_id },
      { action: 'run_kyt', operation_id },
      { action: 'complete_settlement', operation_id },
      { action: 'complete_collateral_return', operation_id },
    ]
    for (let done = 0; done < steps.length; done++) {
      for (let index = 0; index < steps.length; index++) {
        if (index === done) continue
        const before = await api.get('/api/sandbox/loans')
        const answer = await api.post(path, steps[index])
        expect(answer.status, `step ${steps[index]!.action} after ${done}`).toBe(409)
        expect(answer.body.error_code).toBe('FLOW_CONFLICT')
        const after = await api.get('/api/sandbox/loans')
        expect({ ...after.body, request_id: 0 }).toEqual({ ...before.body, request_id: 0 })
      }
      const again = await api.post(path, { action: 'start_payment', repayment_kind: 'interest' })
      expect(again.status).toBe(409)
      expect(again.body.details.reason).toBe('OPERATION_IN_PROGRESS')
      expect((await api.post(path, steps[done])).status).toBe(200)
    }
  })

  it('refuses collateral return for an interest repayment', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const { path, operation_id } = await repay(loanId, { repayment_kind: 'interest' })
    const answer = await api.post(path, { action: 'complete_collateral_return', operation_id })
    expect(answer.status).toBe(409)
  })

  it('validates repayment parameters with INVALID_AMOUNT and unknown loans with 404', async () => {
    api = await createTestApi()
    const loanId = await issueLoan(api)
    const path = `/api/sandbox/loans/${loanId}/repayment-flow`
    for (const body of [
      { action: 'start_payment' },
      { action: 'start_payment', repayment_kind: 'partial_principal' },
      { action: 'start_payment', repayment_kind: 'partial_principal', amount: 20000 },
      { action: 'start_payment', repayment_kind: 'partial_principal', amount: -5 },
      { action: 'start_payment', repayment_kind: 'interest', amount: 1 },
      { action: 'start_payment', repayment_kind: 'interest', full_repayment: true },
    ]) {
      const answer = await api.post(path, body)
      expect(answer.status, JSON.stringify(body)).toBe(400)
      expect(answer.body.error_code).toBe('INVALID_AMOUNT')
    }
    const unknownAction = await api.post(path, { action: 'pay_later' })
    expect(unknownAction.body.error_code).toBe('INVALID_ACTION')
    const missing = await api.post('/api/sandbox/loans/loan_nope/repayment-flow', { action: 'start_payment', repayment_kind: 'interest' })
    expect(missing.status).toBe(404)
    expect(missing.body.error_code).toBe('LOAN_NOT_FOUND')
    // The body's own mistakes come before the loan is looked up (a 400 is not stored; a 404 is).
    for (const body of [{ action: 'start_payment' }, { action: 'start_payment', repayment_kind: 'partial_principal' }, { action: 'start_payment', repayment_kind: 'interest', full_repayment: true }]) {
      const unknownLoan = await api.post('/api/sandbox/loans/loan_nope/repayment-flow', body)
      expect([JSON.stringify(body), unknownLoan.status, unknownLoan.body.error_code]).toEqual([JSON.stringify(body), 400, 'INVALID_AMOUNT'])
    }
    const noOperation = await api.post(path, { action: 'confirm_usdt', ...usdt })
    expect(noOperation.status).toBe(400)
  })

  it('answers 409 when the wallet cannot cover the repayment', async () => {
    // A 50 % origination fee leaves the wallet 30,000 USDT against a 40,400 full repayment.
    api = await createTestApi({ config: { fees: { loan_origination_percent: 50 } } })
    const loanId = await issueLoan(api, api.key, { collateral_btc: 1.5, loan_amount: 40000 })
    const spend = await api.post(`/api/sandbox/loans/${loanId}/repayment-flow`, { action: 'start_payment', repayment_kind: 'full_principal' })
    expect(spend.status).toBe(409)
    expect(spend.body.details.reason).toBe('INSUFFICIENT_BALANCE')
  })
})
