import { hashToHex } from '../domain/address-hash.js'
import { applyDirectAction } from '../domain/direct-actions.js'
import { createEvent } from '../domain/events.js'
import { createLoanBook } from '../domain/loan-book.js'
import { applyLoanFlowStep } from '../domain/loan-flow.js'
import { applyPartnerUpdate } from '../domain/partner.js'
import { applyRepaymentStep } from '../domain/repayment-flow.js'
import type { DomainContext, DomainResult, EventType, LoanBook, SandboxEvent } from '../domain/types.js'
import { loadFixtures } from '../server/fixtures.js'
import { createTestEventObject } from '../webhooks/test-event.js'

const EXAMPLE_TIME = '2026-11-22T12:00:00.000Z'

/**
 * One event of every type as `serve` delivers it, for the document's examples: made by the domain
 * itself (a loan through the 4-step flow, a direct action, a full repayment, a partner update, a
 * test event), so an example cannot drift from the real shape. Ids and time are fixed, so the
 * document is the same on every build; of several events of a type, the last one is kept.
 */
export function buildEventExamples(): Map<EventType, SandboxEvent> {
  const fixtures = loadFixtures()
  let count = 0
  const ctx: DomainContext = {
    now: EXAMPLE_TIME,
    newId: (prefix) => `${prefix}_${hashToHex(`openapi-example:${prefix}:${++count}`, 24)}`,
    keySeed: 'openapi-example',
    config: fixtures.config,
    requiredConfirmations: fixtures.wallet.required_confirmations,
  }
  const examples = new Map<EventType, SandboxEvent>()
  let book: LoanBook = createLoanBook({ ...fixtures.wallet.balances })
  const step = (result: DomainResult) => {
    book = result.book
    for (const event of result.events) examples.set(event.type, event)
  }
  step(applyLoanFlowStep(book, { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' }, ctx))
  step(applyLoanFlowStep(book, { action: 'confirm_btc', tx_hash: 'tx_example_btc', confirmations: ctx.requiredConfirmations.BTC }, ctx))
  step(applyLoanFlowStep(book, { action: 'run_kyt' }, ctx))
  step(applyLoanFlowStep(book, { action: 'complete_payout' }, ctx))
  const loanId = book.loans[0]!.id
  step(applyDirectAction(book, loanId, { action: 'add_collateral', amount: 0.1 }, ctx))
  step(applyRepaymentStep(book, loanId, { action: 'start_payment', repayment_kind: 'full_principal' }, ctx))
  const operationId = book.repayments.at(-1)!.operation_id
  step(applyRepaymentStep(book, loanId, { action: 'confirm_usdt', operation_id: operationId, tx_hash: 'tx_example_usdt', confirmations: ctx.requiredConfirmations.USDT }, ctx))
  for (const action of ['run_kyt', 'complete_settlement', 'complete_collateral_return'] as const) step(applyRepaymentStep(book, loanId, { action, operation_id: operationId }, ctx))
  const { profile } = applyPartnerUpdate(null, { name: 'Acme Lending', email: 'dev@acme.example' }, ctx.now, ctx.keySeed)
  step({ book, events: [createEvent(ctx, 'sandbox.partner.updated', profile)] })
  step({ book, events: [createEvent(ctx, 'sandbox.webhook.test', createTestEventObject(ctx.newId('we'), ctx.newId('test')))] })
  return examples
}
