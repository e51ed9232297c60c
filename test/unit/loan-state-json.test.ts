import { describe, expect, it } from 'vitest'
import { viewLoanState } from '../../src/domain/loan-book.js'
import { replaceWhere } from '../../src/domain/book-updates.js'
import { checkLoanChange } from '../../src/domain/final-records.js'
import type { LoanBook } from '../../src/domain/types.js'
import { joinAnswerParts, partLoanState, stringifyLoanState, type AnswerParts } from '../../src/server/loan-state-json.js'
import { stringifyOnce } from '../../src/storage/json-memo.js'
import { CONFIRMED, createTestContext, directAction, flowStep, issueLoanThroughFlow, repaymentStep, STANDARD_LOAN } from './domain-helpers.js'

/** Issues a loan through the flow and repays it in full: a closed loan, a completed application and a finished operation more. */
function addClosedLoan(book: LoanBook, ctx = createTestContext()): LoanBook {
  return buildBusyBook(ctx, book, false)
}

/** A book with a closed loan, an active one, a settled repayment and an open draft. */
function buildBusyBook(ctx = createTestContext(), start?: LoanBook, busy = true) {
  const first = issueLoanThroughFlow(ctx, start)
  let book = repaymentStep(first.book, first.loan.id, { action: 'start_payment', full_repayment: true }, ctx).book
  const opId = book.repayments.at(-1)!.operation_id
  for (const step of [{ action: 'confirm_usdt', operation_id: opId, ...CONFIRMED }, { action: 'run_kyt', operation_id: opId }, { action: 'complete_settlement', operation_id: opId }, { action: 'complete_collateral_return', operation_id: opId }]) {
    book = repaymentStep(book, first.loan.id, step, ctx).book
  }
  if (!busy) return book
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

describe('stored loan state answers (parts)', () => {
  it('keep final records as runs of positions and give back the exact text against later books', () => {
    const ctx = createTestContext()
    let book: LoanBook = { wallet: { BTC: 10, USDT: 100000 }, loans: [], applications: [], repayments: [], draftId: null }
    const stored: Array<{ parts: AnswerParts; text: string }> = []
    for (let i = 0; i < 6; i++) {
      book = addClosedLoan(book, ctx)
      // An active loan and an open draft between the closed ones: runs must skip them.
      if (i === 2) book = issueLoanThroughFlow(ctx, book).book
      const view = viewLoanState(book)
      const parts = partLoanState(view, book)
      stored.push({ parts, text: JSON.stringify(view) })
    }
    book = addClosedLoan(book, ctx)
    book = flowStep(book, { action: 'start_collateral_transfer', ...STANDARD_LOAN }, ctx).book

    for (const { parts, text } of stored) expect(joinAnswerParts(parts, book)).toBe(text)
    const last = stored.at(-1)!
    expect(last.parts.filter((part) => typeof part !== 'string')).toEqual([
      ['loans', 0, 2], ['loans', 4, 6],
      ['applications', 0, 6],
      ['repayments', 0, 5],
    ])
    // Text is kept only for what can still change: the wallet and the active loan.
    const kept = last.parts.filter((part) => typeof part === 'string').join('')
    expect(kept.length).toBeLessThan(last.text.length / 4)
  })

  it('are plain text when nothing in the answer is final', () => {
    const issued = issueLoanThroughFlow(createTestContext())
    const view = viewLoanState({ ...issued.book, applications: [] })
    expect(partLoanState(view, issued.book)).toEqual([JSON.stringify(view)])
  })

  it('refuse a run whose records are no longer final, and a final record refuses to change', () => {
    const book = addClosedLoan({ wallet: { BTC: 10, USDT: 100000 }, loans: [], applications: [], repayments: [], draftId: null })
    const parts = partLoanState(viewLoanState(book), book)
    const reopened = { ...book, loans: [{ ...book.loans[0]!, status: 'active' as const }] }
    expect(() => joinAnswerParts(parts, reopened)).toThrow(/not a final record/)
    expect(() => replaceWhere(book.loans, 'id', { ...book.loans[0]!, debt: 1 }, checkLoanChange)).toThrow(/final loan/)
  })

  it('keep the long history of an active loan as a position, and give back its text as it grows', () => {
    const ctx = createTestContext()
    const issued = issueLoanThroughFlow(ctx)
    let book = issued.book
    const stored: Array<{ parts: AnswerParts; text: string }> = []
    for (let i = 0; i < 40; i++) {
      book = directAction(book, issued.loan.id, { action: i % 2 ? 'remove_collateral' : 'add_collateral', amount: 0.01 }, ctx).book
      const view = viewLoanState(book)
      stored.push({ parts: partLoanState(view, book), text: JSON.stringify(view) })
    }
    const loan = book.loans[0]!
    expect(loan.history.length).toBeGreaterThan(40)
    for (const { parts, text } of stored) expect(joinAnswerParts(parts, book)).toBe(text)
    // Short histories stay text; long ones are a run.
    expect(stored[0]!.parts.some((part) => part[0] === 'history')).toBe(false)
    expect(stored.at(-1)!.parts).toContainEqual(['history', 0, loan.history.length])
    // A loan whose history would be rewritten, not extended, is refused.
    expect(() => replaceWhere(book.loans, 'id', { ...loan, history: loan.history.map((entry) => ({ ...entry })) }, checkLoanChange)).toThrow(/history of loan/)
    expect(() => replaceWhere(book.loans, 'id', { ...loan, history: loan.history.slice(1) }, checkLoanChange)).toThrow(/history of loan/)
  })
})
