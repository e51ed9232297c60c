import { expect } from 'vitest'
import configJson from '../../fixtures/config.json' with { type: 'json' }
import walletJson from '../../fixtures/wallet.json' with { type: 'json' }
import { applyDirectAction } from '../../src/domain/direct-actions.js'
import { createLoanBook } from '../../src/domain/loan-book.js'
import { applyLoanFlowStep } from '../../src/domain/loan-flow.js'
import { applyRepaymentStep } from '../../src/domain/repayment-flow.js'
import type { DomainContext, DomainResult, Loan, LoanBook, SandboxConfig } from '../../src/domain/types.js'
import { SandboxError } from '../../src/errors/sandbox-error.js'
import { loanActionSchema } from '../../src/schemas/loan-action.js'
import { loanFlowSchema } from '../../src/schemas/loan-flow.js'
import { parseBody } from '../../src/schemas/parse-body.js'
import { repaymentFlowSchema } from '../../src/schemas/repayment-flow.js'

/** The fixture config, typed. */
export const fixtureConfig = configJson as SandboxConfig

/** A fixed time for every step. */
export const NOW = '2025-01-02T03:04:05.000Z'

/** A test context: fixture config and confirmations, counter-based ids (`loan_1`, `evt_2`, ...), fixed time. */
export function createTestContext(config: SandboxConfig = fixtureConfig): DomainContext {
  let counter = 0
  return {
    now: NOW,
    newId: (prefix) => `${prefix}_${++counter}`,
    keySeed: 'key_test',
    config,
    requiredConfirmations: { ...walletJson.required_confirmations },
  }
}

/** A new key's book with the fixture balances (2 BTC, 10000 USDT). */
export function createFixtureBook(): LoanBook {
  return createLoanBook(walletJson.balances)
}

/** Runs a loan flow step from a raw JSON body, as the server would. */
export function flowStep(book: LoanBook, body: unknown, ctx: DomainContext): DomainResult {
  return applyLoanFlowStep(book, parseBody(loanFlowSchema, body), ctx)
}

/** Runs a repayment flow step from a raw JSON body. */
export function repaymentStep(book: LoanBook, loanId: string, body: unknown, ctx: DomainContext): DomainResult {
  return applyRepaymentStep(book, loanId, parseBody(repaymentFlowSchema, body), ctx)
}

/** Runs a direct action from a raw JSON body. */
export function directAction(book: LoanBook, loanId: string, body: unknown, ctx: DomainContext): DomainResult {
  return applyDirectAction(book, loanId, parseBody(loanActionSchema, body), ctx)
}

/** The standard loan of these tests: 0.5 BTC collateral, 20000 USDT. */
export const STANDARD_LOAN = { collateral_btc: 0.5, loan_amount: 20000 }

/** Valid confirmation fields for both flows. */
export const CONFIRMED = { tx_hash: 'tx_abc', confirmations: 6 }

/** Walks all four loan flow steps and returns the book and the issued loan. */
export function issueLoanThroughFlow(ctx: DomainContext, book: LoanBook = createFixtureBook(), request: object = STANDARD_LOAN): { book: LoanBook; loan: Loan } {
  let next = flowStep(book, { action: 'start_collateral_transfer', ...request }, ctx).book
  next = flowStep(next, { action: 'confirm_btc', ...CONFIRMED }, ctx).book
  next = flowStep(next, { action: 'run_kyt' }, ctx).book
  next = flowStep(next, { action: 'complete_payout' }, ctx).book
  const loan = next.loans.at(-1)
  if (!loan) throw new Error('no loan issued')
  return { book: next, loan }
}

/** The loan `id` in `book`. */
export function loanIn(book: LoanBook, id: string): Loan {
  const loan = book.loans.find((l) => l.id === id)
  if (!loan) throw new Error(`loan ${id} missing`)
  return loan
}

/** Runs `step`, expects a SandboxError with `code` (and `reason` for FLOW_CONFLICT), and returns it. */
export function expectError(step: () => unknown, code: string, reason?: string): SandboxError {
  let caught: unknown
  try {
    step()
  } catch (error) {
    caught = error
  }
  expect(caught, `expected ${code}`).toBeInstanceOf(SandboxError)
  const error = caught as SandboxError
  expect({ code: error.code, reason: error.details?.reason }).toEqual({ code, reason })
  return error
}

/**
 * Runs a step on `book` that must fail with `code`/`reason` and checks the book is deep-equal to
 * a snapshot taken before: a rejected step changes nothing.
 */
export function expectRejectedUnchanged(book: LoanBook, step: (book: LoanBook) => unknown, code: string, reason?: string): SandboxError {
  const before = structuredClone(book)
  const error = expectError(() => step(book), code, reason)
  expect(book).toStrictEqual(before)
  return error
}
