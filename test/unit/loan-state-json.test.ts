import { describe, expect, it } from 'vitest'
import { viewLoanState } from '../../src/domain/loan-book.js'
import { stringifyLoanState } from '../../src/server/loan-state-json.js'
import { stringifyOnce } from '../../src/storage/json-memo.js'
import { CONFIRMED, createTestContext, flowStep, issueLoanThroughFlow, repaymentStep, STANDARD_LOAN } from './domain-helpers.js'

/** A book with a closed loan, an active one, a settled repayment and an open draft. */
function buildBusyBook() {
  const ctx = createTestContext()
  const first = issueLoanThroughFlow(ctx)
  let book = repaymentStep(first.book, first.loan.id, { action: 'start_payment', full_repayment: true }, ctx).book
  const opId = book.repayments.at(-1)!.operation_id
  for (const step of [{ action: 'confirm_usdt', operation_id: opId, ...CONFIRMED }, { action: 'run_kyt', operation_id: opId }, { action: 'complete_settlement', operation_id: opId }, { action: 'complete_collateral_return', operation_id: opId }]) {
    book = repaymentStep(book, first.loan.id, step, ctx).book
  }
  book = issueLoanThroughFlow(ctx, book).book
  book = flowStep(book, { action: 'start_collateral_transfer', ...STANDARD_LOAN }, ctx).book
  return book
}

describe('loan state answer text', () => {
  it('is exactly JSON.stringify of the view, for active and closed loans, repayments and a draft', () => {
    const view = viewLoanState(buildBusyBook())
    expect(view.activeLoans).toHaveLength(1)
    expect(view.loanHistory).toHaveLength(1)
    expect(view.draft).not.toBeNull()
    expect(view.sandboxFlow.repaymentOperations).toHaveLength(1)
    expect(stringifyLoanState(view)).toBe(JSON.stringify(view))
  })

  it('is the same whether or not some of its objects were serialized before (by a save)', () => {
    const book = buildBusyBook()
    stringifyOnce(book.loans[0]!)
    stringifyOnce(book.applications[0]!)
    const view = viewLoanState(book)
    expect(stringifyLoanState(view)).toBe(JSON.stringify(view))
    // A later state replaces changed objects, never edits them: its text follows the new objects.
    const after = { ...book, loans: [book.loans[0]!, { ...book.loans[1]!, status: 'closed' as const }] }
    expect(stringifyLoanState(viewLoanState(after))).toBe(JSON.stringify(viewLoanState(after)))
  })

  it('is the text of an empty book too', () => {
    const view = viewLoanState({ wallet: { BTC: 2, USDT: 10000 }, loans: [], applications: [], repayments: [], draftId: null })
    expect(stringifyLoanState(view)).toBe(JSON.stringify(view))
  })
})
