import { describe, expect, it } from 'vitest'
import { viewLoanState } from '../../src/domain/loan-book.js'
import type { LoanBook, RepaymentKind } from '../../src/domain/types.js'
import { CONFIRMED, NOW, createTestContext, directAction, expectRejectedUnchanged, issueLoanThroughFlow, loanIn, repaymentStep } from './domain-helpers.js'

const STEPS = ['confirm_usdt', 'run_kyt', 'complete_settlement'] as const

/** Runs start_payment and returns the book and the new operation id. */
function start(book: LoanBook, loanId: string, body: object, ctx = createTestContext()) {
  const result = repaymentStep(book, loanId, { action: 'start_payment', ...body }, ctx)
  return { ...result, opId: result.book.repayments.at(-1)!.operation_id }
}

/** Runs steps 2-4 on an operation. */
function confirmAndSettle(book: LoanBook, loanId: string, opId: string, ctx = createTestContext()): LoanBook {
  let next = book
  for (const action of STEPS) next = repaymentStep(next, loanId, { action, operation_id: opId, ...CONFIRMED }, ctx).book
  return next
}

describe('repayment flow: the three kinds end to end', () => {
  it('interest: pays what is due and makes the next period due', () => {
    const ctx = createTestContext()
    const issued = issueLoanThroughFlow(ctx)
    const partlyPaid = directAction(issued.book, issued.loan.id, { action: 'repay_interest', amount: 50 }, ctx).book
    expect(loanIn(partlyPaid, issued.loan.id).interestDue).toBe(150)

    const started = start(partlyPaid, issued.loan.id, { repayment_kind: 'interest' }, ctx)
    const op = started.book.repayments[0]!
    expect(op).toMatchObject({ loan_id: issued.loan.id, status: 'awaiting_payment', repayment_kind: 'interest', amount: 150, currency: 'USDT' })
    expect(op.wallets.repayment).toMatchObject({ asset: 'USDT', chainCode: 'sandbox', requiredConfirmations: 6, isRealWallet: false })
    expect(op.wallets.collateralReturn).toBeNull()
    expect(started.events).toEqual([expect.objectContaining({ type: 'sandbox.repayment.updated', data: { object: op } })])
    expect(started.book.wallet.USDT).toBe(29750)

    const confirmed = repaymentStep(started.book, issued.loan.id, { action: 'confirm_usdt', operation_id: started.opId, tx_hash: 'tx_r', confirmations: 6 }, ctx)
    expect(confirmed.book.wallet.USDT).toBe(29600)
    expect(confirmed.book.repayments[0]).toMatchObject({ status: 'payment_confirmed', tx_hash: 'tx_r' })

    const kyt = repaymentStep(confirmed.book, issued.loan.id, { action: 'run_kyt', operation_id: started.opId }, ctx)
    expect(kyt.book.repayments[0]!.status).toBe('kyt_completed')
    expect(kyt.events.map((e) => e.type)).toEqual(['sandbox.repayment.updated'])

    const settled = repaymentStep(kyt.book, issued.loan.id, { action: 'complete_settlement', operation_id: started.opId }, ctx)
    const loan = loanIn(settled.book, issued.loan.id)
    expect(loan).toMatchObject({ status: 'active', debt: 20000, interestDue: 200 })
    expect(loan.history.at(-1)).toEqual({ type: 'interest_paid', at: NOW, amount: 150, asset: 'USDT', operation_id: started.opId })
    expect(settled.book.repayments[0]!.status).toBe('settled')
    expect(settled.events).toEqual([expect.objectContaining({ type: 'sandbox.repayment.settled', data: { object: settled.book.repayments[0] } })])
  })

  it('partial_principal: reduces the debt and LTV; the next interest is on the new debt', () => {
    const ctx = createTestContext()
    const issued = issueLoanThroughFlow(ctx)
    const started = start(issued.book, issued.loan.id, { repayment_kind: 'partial_principal', amount: 5000 }, ctx)
    const book = confirmAndSettle(started.book, issued.loan.id, started.opId, ctx)
    expect(loanIn(book, issued.loan.id)).toMatchObject({ status: 'active', debt: 15000, ltv: 31.58, interestDue: 200 })
    expect(book.wallet).toEqual({ BTC: 1.5, USDT: 24800 })

    const interest = start(book, issued.loan.id, { repayment_kind: 'interest', amount: 200 }, ctx)
    const after = confirmAndSettle(interest.book, issued.loan.id, interest.opId, ctx)
    expect(loanIn(after, issued.loan.id).interestDue).toBe(150)
    expect(after.wallet.USDT).toBe(24600)
  })

  it('full_principal: pays debt plus interest, then returns the collateral and closes the loan', () => {
    const ctx = createTestContext()
    const issued = issueLoanThroughFlow(ctx)
    const appReturn = issued.book.applications[0]!.wallets.collateralReturn
    const started = start(issued.book, issued.loan.id, { full_repayment: true }, ctx)
    expect(started.book.repayments[0]).toMatchObject({ repayment_kind: 'full_principal', amount: 20200 })
    expect(started.book.repayments[0]!.wallets.collateralReturn).toEqual(appReturn)

    const settledBook = confirmAndSettle(started.book, issued.loan.id, started.opId, ctx)
    expect(loanIn(settledBook, issued.loan.id)).toMatchObject({ status: 'active', debt: 0, interestDue: 0, ltv: 0, collateral: 0.5 })
    expect(settledBook.wallet).toEqual({ BTC: 1.5, USDT: 9600 })

    const returned = repaymentStep(settledBook, issued.loan.id, { action: 'complete_collateral_return', operation_id: started.opId }, ctx)
    const loan = loanIn(returned.book, issued.loan.id)
    expect(loan).toMatchObject({ status: 'closed', closedAt: NOW, collateral: 0, ltv: 0, debt: 0 })
    expect(loan.history.slice(-3).map((h) => [h.type, h.amount, h.asset])).toEqual([
      ['interest_paid', 200, 'USDT'],
      ['principal_repaid', 20000, 'USDT'],
      ['collateral_returned', 0.5, 'BTC'],
    ])
    expect(returned.book.wallet).toEqual({ BTC: 2, USDT: 9600 })
    expect(returned.book.repayments[0]!.status).toBe('collateral_returned')
    expect(returned.events).toEqual([expect.objectContaining({ type: 'sandbox.collateral.returned', data: { object: loan } })])
    expect(viewLoanState(returned.book).loanHistory).toEqual([loan])

    expectRejectedUnchanged(returned.book, (b) => repaymentStep(b, issued.loan.id, { action: 'start_payment', repayment_kind: 'interest' }, ctx), 'FLOW_CONFLICT', 'LOAN_NOT_ACTIVE')
  })
})

describe('repayment flow: every out-of-order step is 409 and changes nothing', () => {
  const bodies: Record<RepaymentKind, object> = {
    interest: { repayment_kind: 'interest' },
    partial_principal: { repayment_kind: 'partial_principal', amount: 5000 },
    full_principal: { repayment_kind: 'full_principal' },
  }
  const actions = ['start_payment', 'confirm_usdt', 'run_kyt', 'complete_settlement', 'complete_collateral_return'] as const
  for (const kind of Object.keys(bodies) as RepaymentKind[]) {
    const ctx = createTestContext()
    const issued = issueLoanThroughFlow(ctx)
    const started = start(issued.book, issued.loan.id, bodies[kind], ctx)
    const states: Array<[string, LoanBook, string]> = [['awaiting_payment', started.book, 'confirm_usdt']]
    let book = started.book
    for (const [i, action] of STEPS.entries()) {
      book = repaymentStep(book, issued.loan.id, { action, operation_id: started.opId, ...CONFIRMED }, ctx).book
      states.push([book.repayments[0]!.status, book, i < 2 ? STEPS[i + 1]! : kind === 'full_principal' ? 'complete_collateral_return' : 'start_payment'])
    }
    for (const [status, state, valid] of states) {
      for (const action of actions.filter((a) => a !== valid)) {
        it(`${kind}: ${action} while the operation is ${status}`, () => {
          const body = { action, operation_id: started.opId, ...CONFIRMED, ...bodies[kind] }
          const reason =
            action === 'start_payment' ? 'OPERATION_IN_PROGRESS' : action === 'complete_collateral_return' && kind !== 'full_principal' ? 'COLLATERAL_RETURN_NOT_APPLICABLE' : 'STEP_OUT_OF_ORDER'
          const error = expectRejectedUnchanged(state, (b) => repaymentStep(b, issued.loan.id, body, ctx), 'FLOW_CONFLICT', reason)
          expect(error.status).toBe(409)
          if (reason !== 'COLLATERAL_RETURN_NOT_APPLICABLE') expect(error.details).toMatchObject({ current_status: status, expected_action: valid })
        })
      }
    }
  }
})

describe('repayment flow: a step on a finished operation while another is open', () => {
  it('names the open operation and its next step, not a start_payment that would be refused', () => {
    const ctx = createTestContext()
    const issued = issueLoanThroughFlow(ctx)
    const first = start(issued.book, issued.loan.id, { repayment_kind: 'interest' }, ctx)
    const settled = confirmAndSettle(first.book, issued.loan.id, first.opId, ctx)
    const second = start(settled, issued.loan.id, { repayment_kind: 'interest' }, ctx)
    for (const action of ['confirm_usdt', 'run_kyt', 'complete_settlement'] as const) {
      const error = expectRejectedUnchanged(second.book, (b) => repaymentStep(b, issued.loan.id, { action, operation_id: first.opId, ...CONFIRMED }, ctx), 'FLOW_CONFLICT', 'STEP_OUT_OF_ORDER')
      expect(error.details).toMatchObject({ operation_id: first.opId, current_status: 'settled', expected_action: 'confirm_usdt', open_operation_id: second.opId })
      expect(error.message).toBe(`Operation ${first.opId} is settled, not the open operation; the open operation is ${second.opId}, whose next action is confirm_usdt.`)
    }
  })

  it('with no other operation open, still points to a new start_payment', () => {
    const ctx = createTestContext()
    const issued = issueLoanThroughFlow(ctx)
    const first = start(issued.book, issued.loan.id, { repayment_kind: 'interest' }, ctx)
    const settled = confirmAndSettle(first.book, issued.loan.id, first.opId, ctx)
    const error = expectRejectedUnchanged(settled, (b) => repaymentStep(b, issued.loan.id, { action: 'run_kyt', operation_id: first.opId }, ctx), 'FLOW_CONFLICT', 'STEP_OUT_OF_ORDER')
    expect(error.details).toMatchObject({ current_status: 'settled', expected_action: 'start_payment' })
    expect(error.details).not.toHaveProperty('open_operation_id')
  })
})

describe('repayment flow: step checks', () => {
  const ctx = createTestContext()
  const issued = issueLoanThroughFlow(ctx)
  const { book, loan } = issued

  it('an unknown loan is LOAN_NOT_FOUND', () => {
    expect(expectRejectedUnchanged(book, (b) => repaymentStep(b, 'loan_missing', { action: 'start_payment', repayment_kind: 'interest' }, ctx), 'LOAN_NOT_FOUND').status).toBe(404)
  })

  it.each([
    [{}, 'repayment_kind'],
    [{ full_repayment: true, repayment_kind: 'interest' }, 'repayment_kind'],
    [{ full_repayment: false, repayment_kind: 'full_principal' }, 'full_repayment'],
    [{ repayment_kind: 'interest', amount: 150 }, 'amount'],
    [{ repayment_kind: 'partial_principal' }, 'amount'],
    [{ repayment_kind: 'partial_principal', amount: 20000 }, 'amount'],
    [{ repayment_kind: 'partial_principal', amount: 25000 }, 'amount'],
    [{ repayment_kind: 'full_principal', amount: 20000 }, 'amount'],
  ])('start_payment with %j is INVALID_AMOUNT on %s', (params, field) => {
    const error = expectRejectedUnchanged(book, (b) => repaymentStep(b, loan.id, { action: 'start_payment', ...params }, ctx), 'INVALID_AMOUNT')
    expect(error.details?.field).toBe(field)
  })

  it('start_payment accepts a full_principal amount equal to debt plus interest', () => {
    expect(start(book, loan.id, { repayment_kind: 'full_principal', amount: 20200 }, ctx).book.repayments[0]!.amount).toBe(20200)
  })

  it('start_payment for more than the wallet holds is INSUFFICIENT_BALANCE', () => {
    const poor: LoanBook = { ...book, wallet: { ...book.wallet, USDT: 150 } }
    const error = expectRejectedUnchanged(poor, (b) => repaymentStep(b, loan.id, { action: 'start_payment', repayment_kind: 'interest' }, ctx), 'FLOW_CONFLICT', 'INSUFFICIENT_BALANCE')
    expect(error.details).toMatchObject({ asset: 'USDT', required: 200, available: 150 })
  })

  describe('confirm_usdt', () => {
    const started = start(book, loan.id, { repayment_kind: 'interest' }, ctx)
    const step = (body: object) => (b: LoanBook) => repaymentStep(b, loan.id, { action: 'confirm_usdt', ...body }, ctx)

    it('without operation_id or tx_hash is INVALID_REQUEST, before the loan or operation is looked at', () => {
      expect(expectRejectedUnchanged(started.book, step(CONFIRMED), 'INVALID_REQUEST').details).toMatchObject({ field: 'operation_id' })
      expect(expectRejectedUnchanged(started.book, (b) => repaymentStep(b, 'loan_missing', { action: 'confirm_usdt', ...CONFIRMED }, ctx), 'INVALID_REQUEST').details).toMatchObject({ field: 'operation_id' })
      expect(expectRejectedUnchanged(started.book, step({ operation_id: 'rop_missing', confirmations: 6 }), 'INVALID_REQUEST').details).toMatchObject({ field: 'tx_hash' })
    })

    it('with an unknown operation, or one of another loan, is OPERATION_NOT_FOUND', () => {
      expectRejectedUnchanged(started.book, step({ ...CONFIRMED, operation_id: 'rop_missing' }), 'FLOW_CONFLICT', 'OPERATION_NOT_FOUND')
      const other = issueLoanThroughFlow(ctx, started.book, { collateral_btc: 0.2, loan_amount: 1000 })
      expectRejectedUnchanged(other.book, (b) => repaymentStep(b, other.loan.id, { action: 'confirm_usdt', operation_id: started.opId, ...CONFIRMED }, ctx), 'FLOW_CONFLICT', 'OPERATION_NOT_FOUND')
    })

    it('without tx_hash is INVALID_REQUEST; with too few confirmations INSUFFICIENT_CONFIRMATIONS', () => {
      expect(expectRejectedUnchanged(started.book, step({ operation_id: started.opId, confirmations: 6 }), 'INVALID_REQUEST').details).toMatchObject({ field: 'tx_hash' })
      const error = expectRejectedUnchanged(started.book, step({ operation_id: started.opId, tx_hash: 'tx', confirmations: 5 }), 'FLOW_CONFLICT', 'INSUFFICIENT_CONFIRMATIONS')
      expect(error.details).toMatchObject({ required: 6, received: 5 })
    })

    it('when the wallet was drained since start_payment is INSUFFICIENT_BALANCE', () => {
      const drained: LoanBook = { ...started.book, wallet: { ...started.book.wallet, USDT: 10 } }
      expectRejectedUnchanged(drained, step({ operation_id: started.opId, ...CONFIRMED }), 'FLOW_CONFLICT', 'INSUFFICIENT_BALANCE')
    })
  })
})
