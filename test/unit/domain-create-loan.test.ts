import { describe, expect, it } from 'vitest'
import { createLoanDirect } from '../../src/domain/create-loan.js'
import { viewLoanState } from '../../src/domain/loan-book.js'
import type { DomainContext, LoanBook } from '../../src/domain/types.js'
import { createLoanSchema } from '../../src/schemas/create-loan.js'
import { parseBody } from '../../src/schemas/parse-body.js'
import { STANDARD_LOAN, createFixtureBook, createTestContext, expectRejectedUnchanged, flowStep } from './domain-helpers.js'

function createLoan(book: LoanBook, body: unknown, ctx: DomainContext) {
  return createLoanDirect(book, parseBody(createLoanSchema, body), ctx)
}

describe('createLoanDirect', () => {
  it('takes the collateral, pays out the loan minus the fee and emits sandbox.loan.issued', () => {
    const ctx = createTestContext()
    const result = createLoan(createFixtureBook(), { ...STANDARD_LOAN, external_client_id: 'c-1' }, ctx)
    const loan = result.book.loans[0]!
    expect(loan).toMatchObject({ status: 'active', currency: 'USDT', debt: 20000, collateral: 0.5, ltv: 42.11, interestDue: 200, originationFee: 200, external_client_id: 'c-1' })
    expect(loan).not.toHaveProperty('application_id')
    expect(loan.history.map((h) => h.type)).toEqual(['collateral_deposited', 'issued', 'origination_fee'])
    expect(result.book.wallet).toEqual({ BTC: 1.5, USDT: 29800 })
    expect(result.events).toEqual([expect.objectContaining({ type: 'sandbox.loan.issued', data: { object: loan } })])
  })

  it('stores amounts sent with float noise at their precision (0.7 + 0.1 BTC, 19999.99 + 199.99 USDT)', () => {
    const ctx = createTestContext()
    const body = { collateral_btc: 0.7 + 0.1, loan_amount: 19_999.99 + 199.99 }
    const loan = createLoan(createFixtureBook(), body, ctx).book.loans[0]!
    expect(loan).toMatchObject({ collateral: 0.8, debt: 20_199.98, principal: 20_199.98 })
    expect(loan.history.slice(0, 2).map((h) => h.amount)).toEqual([0.8, 20_199.98])
    const app = flowStep(createFixtureBook(), { action: 'start_collateral_transfer', ...body }, ctx).book.applications[0]!
    expect(app).toMatchObject({ collateral_btc: 0.8, loan_amount: 20_199.98 })
  })

  it('leaves an open draft alone', () => {
    const ctx = createTestContext()
    const drafted = flowStep(createFixtureBook(), { action: 'start_collateral_transfer', ...STANDARD_LOAN }, ctx).book
    const result = createLoan(drafted, { collateral_btc: 0.2, loan_amount: 5000 }, ctx)
    expect(result.book.draftId).toBe(drafted.draftId)
    expect(result.book.applications).toEqual(drafted.applications)
    expect(viewLoanState(result.book).activeLoans).toHaveLength(1)
  })

  it('rejects a loan above the limits without changing the book', () => {
    const ctx = createTestContext()
    const error = expectRejectedUnchanged(createFixtureBook(), (b) => createLoan(b, { collateral_btc: 0.5, loan_amount: 50 }, ctx), 'INVALID_AMOUNT')
    expect(error.details).toMatchObject({ field: 'loan_amount', limit: 'limits.loan_amount.min', allowed: 100 })
  })

  it('rejects collateral the wallet does not hold as INSUFFICIENT_BALANCE', () => {
    const ctx = createTestContext()
    expectRejectedUnchanged(createFixtureBook(), (b) => createLoan(b, { collateral_btc: 3, loan_amount: 20000 }, ctx), 'FLOW_CONFLICT', 'INSUFFICIENT_BALANCE')
  })
})
