import { createEvent } from '../domain/events.js'
import { applyDirectAction } from '../domain/direct-actions.js'
import { createLoanBook } from '../domain/loan-book.js'
import { applyLoanFlowStep } from '../domain/loan-flow.js'
import { applyPartnerUpdate } from '../domain/partner.js'
import { applyRepaymentStep } from '../domain/repayment-flow.js'
import type { Balances, DomainContext, LoanBook, SandboxEvent } from '../domain/types.js'
import type { PartnerProfileInput } from '../schemas/partner.js'
import { createId } from '../server/ids.js'
import { loadFixtures } from '../server/fixtures.js'
import { createTestEventObject } from '../webhooks/test-event.js'

/**
 * Walks the pure domain the server runs through every step that sends an event, with `ctx`'s ids
 * and time: a loan through the 4-step flow, a direct action, a full repayment with collateral
 * return, a partner update (`partner`) and a test event, from a wallet holding `balances`. One or
 * more events of every type, whose shapes can never drift from what `serve` delivers.
 */
export function walkSampleEvents(ctx: DomainContext, options: { balances: Balances; partner: PartnerProfileInput }): SandboxEvent[] {
  const events: SandboxEvent[] = []
  let book: LoanBook = createLoanBook({ ...options.balances })
  const step = (result: { book: LoanBook; events: SandboxEvent[] }) => {
    book = result.book
    events.push(...result.events)
  }
  step(applyLoanFlowStep(book, { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' }, ctx))
  step(applyLoanFlowStep(book, { action: 'confirm_btc', tx_hash: 'tx_sample_btc', confirmations: ctx.requiredConfirmations.BTC }, ctx))
  step(applyLoanFlowStep(book, { action: 'run_kyt' }, ctx))
  step(applyLoanFlowStep(book, { action: 'complete_payout' }, ctx))
  const loanId = book.loans[0]!.id
  step(applyDirectAction(book, loanId, { action: 'add_collateral', amount: 0.1 }, ctx))
  step(applyRepaymentStep(book, loanId, { action: 'start_payment', repayment_kind: 'full_principal' }, ctx))
  const operationId = book.repayments.at(-1)!.operation_id
  for (const action of ['confirm_usdt', 'run_kyt', 'complete_settlement', 'complete_collateral_return'] as const) {
    const input = action === 'confirm_usdt' ? { action, operation_id: operationId, tx_hash: 'tx_sample_usdt', confirmations: ctx.requiredConfirmations.USDT } : { action, operation_id: operationId }
    step(applyRepaymentStep(book, loanId, input, ctx))
  }
  const { profile } = applyPartnerUpdate(null, options.partner, ctx.now, ctx.keySeed)
  events.push(createEvent(ctx, 'sandbox.partner.updated', profile))
  events.push(createEvent(ctx, 'sandbox.webhook.test', createTestEventObject(ctx.newId('we'), ctx.newId('test'))))
  return events
}

/**
 * Real events, one or more of every type (walkSampleEvents), with fresh ids, for `webhook verify`.
 * The partner's name is not ASCII, as partner names can be: a receiver that checks a
 * re-serialization of the parsed body (Python's json.dumps escapes it as \uXXXX) instead of the
 * raw bytes fails on it.
 */
export function buildSampleEvents(now: Date = new Date()): SandboxEvent[] {
  const fixtures = loadFixtures()
  const ctx: DomainContext = {
    now: now.toISOString(),
    newId: createId,
    keySeed: 'webhook-verify',
    config: fixtures.config,
    requiredConfirmations: fixtures.wallet.required_confirmations,
  }
  return walkSampleEvents(ctx, { balances: fixtures.wallet.balances, partner: { name: 'Exämple Partner — 東京' } })
}
