import { describe, expect, it } from 'vitest'
import { viewLoanState } from '../../src/domain/loan-book.js'
import { deriveSandboxAddress } from '../../src/domain/wallets.js'
import type { LoanBook } from '../../src/domain/types.js'
import { CONFIRMED, NOW, STANDARD_LOAN, createFixtureBook, createTestContext, expectRejectedUnchanged, flowStep, issueLoanThroughFlow } from './domain-helpers.js'

/** A body valid for every action, so only the step order can fail. */
const FULL_BODY = { ...STANDARD_LOAN, ...CONFIRMED }
const ACTIONS = ['start_collateral_transfer', 'confirm_btc', 'run_kyt', 'complete_payout'] as const

describe('loan flow: happy path', () => {
  it('start_collateral_transfer opens a draft with wallets and calculated terms', () => {
    const ctx = createTestContext()
    const book = createFixtureBook()
    const result = flowStep(book, { action: 'start_collateral_transfer', ...STANDARD_LOAN, external_client_id: 'client-7' }, ctx)
    const app = result.book.applications[0]!
    expect(app).toMatchObject({ id: 'app_1', status: 'awaiting_collateral', collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT', external_client_id: 'client-7' })
    expect(app.calculation).toEqual({ collateralValueUsd: 47500, ltv: 42.11, originationFee: 200, payoutAmount: 19800, interestDue: 200, interestRatePercent: 12, interestPaymentMonths: 1 })
    expect(app.wallets.collateralDeposit).toMatchObject({ asset: 'BTC', chainCode: 'sandbox', address: deriveSandboxAddress('key_test', 'BTC', 'app_1', 'collateralDeposit'), requiredConfirmations: 2 })
    expect(app.wallets.loanPayout).toMatchObject({ asset: 'USDT', requiredConfirmations: 6 })
    expect(app.wallets.collateralReturn.address).not.toBe(app.wallets.collateralDeposit.address)
    expect(result.book.draftId).toBe('app_1')
    expect(result.book.wallet).toEqual({ BTC: 2, USDT: 10000 })
    expect(result.events).toEqual([{ id: 'evt_2', type: 'sandbox.loan_application.updated', created_at: NOW, api_version: '0.3.0', data: { object: app } }])
    expect(viewLoanState(result.book).draft).toEqual(app)
    expect(book).toStrictEqual(createFixtureBook())
  })

  it('confirm_btc takes the collateral from the wallet and records the transfer', () => {
    const ctx = createTestContext()
    const started = flowStep(createFixtureBook(), { action: 'start_collateral_transfer', ...STANDARD_LOAN }, ctx).book
    const result = flowStep(started, { action: 'confirm_btc', tx_hash: 'tx_1', confirmations: 2 }, ctx)
    expect(result.book.wallet).toEqual({ BTC: 1.5, USDT: 10000 })
    expect(result.book.applications[0]).toMatchObject({ status: 'collateral_confirmed', collateral_tx_hash: 'tx_1' })
    expect(result.events.map((e) => e.type)).toEqual(['sandbox.loan_application.updated'])
  })

  it('run_kyt then complete_payout issue an active loan and pay out the loan minus the fee', () => {
    const ctx = createTestContext()
    let book = flowStep(createFixtureBook(), { action: 'start_collateral_transfer', ...STANDARD_LOAN, client_reference: 'ref-1' }, ctx).book
    book = flowStep(book, { action: 'confirm_btc', ...CONFIRMED }, ctx).book
    const kyt = flowStep(book, { action: 'run_kyt' }, ctx)
    expect(kyt.book.applications[0]!.status).toBe('kyt_completed')
    expect(kyt.events.map((e) => e.type)).toEqual(['sandbox.loan_application.updated'])

    const payout = flowStep(kyt.book, { action: 'complete_payout' }, ctx)
    const loan = payout.book.loans[0]!
    expect(loan).toEqual({
      id: expect.stringMatching(/^loan_/),
      status: 'active',
      currency: 'USDT',
      principal: 20000,
      debt: 20000,
      collateral: 0.5,
      ltv: 42.11,
      interestDue: 200,
      interestRatePercent: 12,
      interestPaymentMonths: 1,
      originationFee: 200,
      application_id: 'app_1',
      client_reference: 'ref-1',
      createdAt: NOW,
      updatedAt: NOW,
      history: [
        { type: 'collateral_deposited', at: NOW, amount: 0.5, asset: 'BTC' },
        { type: 'issued', at: NOW, amount: 20000, asset: 'USDT' },
        { type: 'origination_fee', at: NOW, amount: 200, asset: 'USDT' },
      ],
    })
    expect(payout.book.wallet).toEqual({ BTC: 1.5, USDT: 29800 })
    expect(payout.book.applications[0]).toMatchObject({ status: 'completed', loan_id: loan.id })
    expect(payout.book.draftId).toBeNull()
    expect(payout.events).toEqual([expect.objectContaining({ type: 'sandbox.loan.issued', data: { object: loan } })])
    const view = viewLoanState(payout.book)
    expect(view.activeLoans).toEqual([loan])
    expect(view.draft).toBeNull()
  })

  it('allows a new draft once the previous one is paid out', () => {
    const ctx = createTestContext()
    const { book } = issueLoanThroughFlow(ctx)
    const next = flowStep(book, { action: 'start_collateral_transfer', collateral_btc: 0.2, loan_amount: 5000 }, ctx)
    expect(next.book.applications).toHaveLength(2)
    expect(next.book.draftId).toBe(next.book.applications[1]!.id)
  })
})

describe('loan flow: every out-of-order step is 409 and changes nothing', () => {
  const ctx = createTestContext()
  let book = createFixtureBook()
  const states: Array<[string, LoanBook, (typeof ACTIONS)[number]]> = []
  states.push(['no draft', book, 'start_collateral_transfer'])
  for (const action of ACTIONS.slice(0, 3)) {
    book = flowStep(book, { action, ...FULL_BODY }, ctx).book
    states.push([book.applications[0]!.status, book, ACTIONS[ACTIONS.indexOf(action) + 1]!])
  }
  const afterPayout = flowStep(book, { action: 'complete_payout' }, ctx).book
  states.push(['after payout', afterPayout, 'start_collateral_transfer'])

  for (const [label, state, valid] of states) {
    for (const action of ACTIONS.filter((a) => a !== valid)) {
      it(`${action} in state "${label}"`, () => {
        const draftOpen = state.draftId !== null
        const reason = action === 'start_collateral_transfer' && draftOpen ? 'DRAFT_ALREADY_OPEN' : 'STEP_OUT_OF_ORDER'
        const error = expectRejectedUnchanged(state, (b) => flowStep(b, { action, ...FULL_BODY }, ctx), 'FLOW_CONFLICT', reason)
        expect(error.status).toBe(409)
        expect(error.details).toMatchObject({ expected_action: valid, current_status: draftOpen ? state.applications[0]!.status : null })
        if (reason === 'STEP_OUT_OF_ORDER') expect(error.message).toContain(`The next valid action is ${valid}.`)
      })
    }
  }
})

describe('loan flow: step checks', () => {
  const ctx = createTestContext()
  const started = flowStep(createFixtureBook(), { action: 'start_collateral_transfer', ...STANDARD_LOAN }, ctx).book

  it.each(['collateral_btc', 'loan_amount'])('start_collateral_transfer without %s is INVALID_AMOUNT', (field) => {
    const body: Record<string, unknown> = { action: 'start_collateral_transfer', ...STANDARD_LOAN }
    delete body[field]
    const error = expectRejectedUnchanged(createFixtureBook(), (b) => flowStep(b, body, ctx), 'INVALID_AMOUNT')
    expect(error.details).toEqual({ field, issue: 'is required' })
  })

  it('start_collateral_transfer beyond the limits is INVALID_AMOUNT naming the limit', () => {
    const error = expectRejectedUnchanged(createFixtureBook(), (b) => flowStep(b, { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 30000 }, ctx), 'INVALID_AMOUNT')
    expect(error.details).toMatchObject({ field: 'loan_amount', limit: 'risk.max_ltv_percent' })
  })

  it('start_collateral_transfer in an unsupported currency is INVALID_REQUEST', () => {
    const error = expectRejectedUnchanged(createFixtureBook(), (b) => flowStep(b, { action: 'start_collateral_transfer', ...STANDARD_LOAN, loan_currency: 'RUB' }, ctx), 'INVALID_REQUEST')
    expect(error.details).toMatchObject({ field: 'loan_currency' })
  })

  it('start_collateral_transfer with more collateral than the wallet holds is INSUFFICIENT_BALANCE', () => {
    const error = expectRejectedUnchanged(createFixtureBook(), (b) => flowStep(b, { action: 'start_collateral_transfer', collateral_btc: 2.5, loan_amount: 20000 }, ctx), 'FLOW_CONFLICT', 'INSUFFICIENT_BALANCE')
    expect(error.details).toMatchObject({ asset: 'BTC', required: 2.5, available: 2 })
  })

  it('confirm_btc without tx_hash or confirmations is INVALID_REQUEST', () => {
    expect(expectRejectedUnchanged(started, (b) => flowStep(b, { action: 'confirm_btc', confirmations: 3 }, ctx), 'INVALID_REQUEST').details).toMatchObject({ field: 'tx_hash' })
    expect(expectRejectedUnchanged(started, (b) => flowStep(b, { action: 'confirm_btc', tx_hash: 'tx' }, ctx), 'INVALID_REQUEST').details).toMatchObject({ field: 'confirmations' })
  })

  it('confirm_btc checks its own fields before the flow state: no draft still gives the 400', () => {
    expect(expectRejectedUnchanged(createFixtureBook(), (b) => flowStep(b, { action: 'confirm_btc', confirmations: 3 }, ctx), 'INVALID_REQUEST').details).toMatchObject({ field: 'tx_hash' })
    expect(expectRejectedUnchanged(createFixtureBook(), (b) => flowStep(b, { action: 'confirm_btc', tx_hash: 'tx' }, ctx), 'INVALID_REQUEST').details).toMatchObject({ field: 'confirmations' })
    // Too few confirmations is judged against the draft, so without one the step is out of order.
    expectRejectedUnchanged(createFixtureBook(), (b) => flowStep(b, { action: 'confirm_btc', tx_hash: 'tx', confirmations: 0 }, ctx), 'FLOW_CONFLICT', 'STEP_OUT_OF_ORDER')
  })

  it('confirm_btc with too few confirmations is INSUFFICIENT_CONFIRMATIONS', () => {
    const error = expectRejectedUnchanged(started, (b) => flowStep(b, { action: 'confirm_btc', tx_hash: 'tx', confirmations: 1 }, ctx), 'FLOW_CONFLICT', 'INSUFFICIENT_CONFIRMATIONS')
    expect(error.details).toMatchObject({ required: 2, received: 1 })
  })

  it('confirm_btc when the wallet no longer holds the collateral is INSUFFICIENT_BALANCE', () => {
    const drained: LoanBook = { ...started, wallet: { BTC: 0.4, USDT: 10000 } }
    expectRejectedUnchanged(drained, (b) => flowStep(b, { action: 'confirm_btc', ...CONFIRMED }, ctx), 'FLOW_CONFLICT', 'INSUFFICIENT_BALANCE')
  })

  it('an application_id that does not exist is LOAN_NOT_FOUND', () => {
    const error = expectRejectedUnchanged(started, (b) => flowStep(b, { action: 'confirm_btc', ...CONFIRMED, application_id: 'app_missing' }, ctx), 'LOAN_NOT_FOUND')
    expect(error.status).toBe(404)
  })

  it('an application_id that is not the open draft is STEP_OUT_OF_ORDER', () => {
    const { book } = issueLoanThroughFlow(ctx)
    const reopened = flowStep(book, { action: 'start_collateral_transfer', ...STANDARD_LOAN }, ctx).book
    const oldId = reopened.applications[0]!.id
    const error = expectRejectedUnchanged(reopened, (b) => flowStep(b, { action: 'confirm_btc', ...CONFIRMED, application_id: oldId }, ctx), 'FLOW_CONFLICT', 'STEP_OUT_OF_ORDER')
    expect(error.details).toMatchObject({ application_id: oldId, current_status: 'completed', expected_action: 'confirm_btc' })
    expect(error.message).toBe(`Application ${oldId} is completed, not the open application; the open application is ${reopened.draftId}, whose next action is confirm_btc.`)
    // With none open, the right action and a finished application's id: the message says to leave the id out.
    const none = expectRejectedUnchanged(book, (b) => flowStep(b, { action: 'start_collateral_transfer', ...STANDARD_LOAN, application_id: oldId }, ctx), 'FLOW_CONFLICT', 'STEP_OUT_OF_ORDER')
    expect(none.message).toBe(`Application ${oldId} is completed, not the open application; no application is open: start_collateral_transfer without application_id opens a new one.`)
    expect(none.details).toMatchObject({ application_id: oldId, current_status: 'completed', expected_action: 'start_collateral_transfer' })
    expect(flowStep(reopened, { action: 'confirm_btc', ...CONFIRMED, application_id: reopened.draftId }, ctx).book.applications[1]!.status).toBe('collateral_confirmed')
  })
})
