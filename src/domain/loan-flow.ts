import { SandboxError, flowConflict } from '../errors/sandbox-error.js'
import type { LoanFlowAction, LoanFlowInput } from '../schemas/loan-flow.js'
import { assertWalletHolds, debitWallet, replaceWhere } from './book-updates.js'
import { assertSameGrouping } from './draft-grouping.js'
import { checkApplicationChange } from './final-records.js'
import { createEvent } from './events.js'
import { readTransfer, requireAmount, requireConfirmations, stepOutOfOrder, type CheckedTransfer } from './flow-guards.js'
import { issueLoan, pickPartnerFields } from './issue-loan.js'
import { findDraft } from './loan-book.js'
import { assertNewLoanWithinLimits, computeLoanTerms, roundNewLoanRequest, type NewLoanRequest } from './loan-math.js'
import type { ApplicationStatus, DomainContext, DomainResult, LoanApplication, LoanBook } from './types.js'
import { createSandboxWallet } from './wallets.js'

/** The action that advances an application in each status (null: the flow is finished). */
const NEXT_ACTION: Record<ApplicationStatus, LoanFlowAction | null> = {
  awaiting_collateral: 'confirm_btc',
  collateral_confirmed: 'run_kyt',
  kyt_completed: 'complete_payout',
  completed: null,
}

/** The action that continues the flow from a draft (or from none): its next step, or a new start. */
export function nextLoanFlowAction(draft: Pick<LoanApplication, 'status'> | null): LoanFlowAction {
  return draft ? (NEXT_ACTION[draft.status] ?? 'start_collateral_transfer') : 'start_collateral_transfer'
}

/** The action valid for the key right now: the draft's next step, or starting a new draft. */
function nextFlowAction(book: LoanBook): LoanFlowAction {
  return nextLoanFlowAction(findDraft(book))
}

/**
 * POST /api/sandbox/loans/flow: advances the key's loan application one step (spec 3.1).
 * A step sent from the wrong status gives 409 FLOW_CONFLICT and changes nothing.
 */
export function applyLoanFlowStep(book: LoanBook, input: LoanFlowInput, ctx: DomainContext): DomainResult {
  // The body's own fields first (README: order of checks), so a malformed step is the same 400
  // whatever its application_id names, and never a 404 or 409 stored under its Idempotency-Key.
  const request = input.action === 'start_collateral_transfer' ? readNewLoanRequest(input, ctx) : undefined
  const transfer = input.action === 'confirm_btc' ? readTransfer(input) : undefined
  assertTargetIsDraft(book, input)
  // Only on the step the draft is waiting for: one out of order is the 409 it always was.
  const draft = findDraft(book)
  if (draft && input.action !== 'start_collateral_transfer' && NEXT_ACTION[draft.status] === input.action) assertSameGrouping(draft, input)
  switch (input.action) {
    case 'start_collateral_transfer':
      return startCollateralTransfer(book, input, request!, ctx)
    case 'confirm_btc':
      return confirmBtc(book, transfer!, ctx)
    case 'run_kyt':
      return advanceDraft(book, 'run_kyt', 'collateral_confirmed', ctx, (draft) => ({ ...draft, status: 'kyt_completed' }))
    case 'complete_payout':
      return completePayout(book, ctx)
  }
}

/** An `application_id` in the body must name the open draft: 404 when unknown, 409 otherwise. */
function assertTargetIsDraft(book: LoanBook, input: LoanFlowInput): void {
  if (input.application_id === undefined) return
  const app = book.applications.find((a) => a.id === input.application_id)
  if (!app) {
    throw new SandboxError('LOAN_NOT_FOUND', `Application ${input.application_id} was not found.`, { field: 'application_id', application_id: input.application_id })
  }
  if (app.id !== book.draftId) {
    // The action may be the right one and the id the wrong one: "not allowed from status completed;
    // the next valid action is <the same action>" would read as a contradiction.
    const draft = findDraft(book)
    const next = nextFlowAction(book)
    const instead = draft
      ? `the open application is ${draft.id}, whose next action is ${next}.`
      : `no application is open: ${next} without application_id opens a new one.`
    throw stepOutOfOrder(input.action, app.status, next, { application_id: app.id }, `Application ${app.id} is ${app.status}, not the open application; ${instead}`)
  }
}

/** The loan a start_collateral_transfer asks for, checked against the config's limits (400 otherwise). */
function readNewLoanRequest(input: LoanFlowInput, ctx: DomainContext): NewLoanRequest {
  const action = 'start_collateral_transfer'
  const request = roundNewLoanRequest({
    collateral_btc: requireAmount('collateral_btc', input.collateral_btc, action),
    loan_amount: requireAmount('loan_amount', input.loan_amount, action),
    loan_currency: input.loan_currency ?? 'USDT',
  })
  assertNewLoanWithinLimits(request, ctx.config)
  return request
}

/** Step 1: opens a draft for the checked `request`, with its wallets and calculated terms. */
function startCollateralTransfer(book: LoanBook, input: LoanFlowInput, request: NewLoanRequest, ctx: DomainContext): DomainResult {
  const draft = findDraft(book)
  if (draft) {
    throw flowConflict('DRAFT_ALREADY_OPEN', `Application ${draft.id} is still open; finish it before starting another.`, {
      application_id: draft.id,
      current_status: draft.status,
      expected_action: NEXT_ACTION[draft.status],
    })
  }
  assertWalletHolds(book.wallet, 'BTC', request.collateral_btc)
  const id = ctx.newId('app')
  const app: LoanApplication = {
    id,
    status: 'awaiting_collateral',
    ...request,
    ...pickPartnerFields(input),
    wallets: {
      collateralDeposit: createSandboxWallet(ctx, 'BTC', id, 'collateralDeposit'),
      loanPayout: createSandboxWallet(ctx, 'USDT', id, 'loanPayout'),
      collateralReturn: createSandboxWallet(ctx, 'BTC', id, 'collateralReturn'),
    },
    calculation: computeLoanTerms(request.collateral_btc, request.loan_amount, ctx.config),
    createdAt: ctx.now,
    updatedAt: ctx.now,
  }
  return {
    book: { ...book, applications: [...book.applications, app], draftId: id },
    events: [createEvent(ctx, 'sandbox.loan_application.updated', app)],
  }
}

/** The open draft, if it is in `status`; otherwise 409 STEP_OUT_OF_ORDER. */
function requireDraftIn(book: LoanBook, action: LoanFlowAction, status: ApplicationStatus): LoanApplication {
  const draft = findDraft(book)
  if (!draft) throw stepOutOfOrder(action, null, 'start_collateral_transfer')
  if (draft.status !== status) throw stepOutOfOrder(action, draft.status, NEXT_ACTION[draft.status], { application_id: draft.id })
  return draft
}

/** Step 2: the simulated BTC transfer arrives; the collateral leaves the simulator wallet. */
function confirmBtc(book: LoanBook, transfer: CheckedTransfer, ctx: DomainContext): DomainResult {
  const draft = requireDraftIn(book, 'confirm_btc', 'awaiting_collateral')
  const txHash = requireConfirmations(transfer, ctx.requiredConfirmations.BTC)
  const wallet = debitWallet(book.wallet, 'BTC', draft.collateral_btc)
  const next: LoanApplication = { ...draft, status: 'collateral_confirmed', collateral_tx_hash: txHash, updatedAt: ctx.now }
  return {
    book: { ...book, wallet, applications: replaceWhere(book.applications, 'id', next, checkApplicationChange) },
    events: [createEvent(ctx, 'sandbox.loan_application.updated', next)],
  }
}

/** A step that only moves the draft from `from` to the status `change` sets. */
function advanceDraft(book: LoanBook, action: LoanFlowAction, from: ApplicationStatus, ctx: DomainContext, change: (draft: LoanApplication) => LoanApplication): DomainResult {
  const draft = requireDraftIn(book, action, from)
  const next = { ...change(draft), updatedAt: ctx.now }
  return {
    book: { ...book, applications: replaceWhere(book.applications, 'id', next, checkApplicationChange) },
    events: [createEvent(ctx, 'sandbox.loan_application.updated', next)],
  }
}

/** Step 4: pays out and turns the draft into an active loan; the key may start a new draft. */
function completePayout(book: LoanBook, ctx: DomainContext): DomainResult {
  const draft = requireDraftIn(book, 'complete_payout', 'kyt_completed')
  const issued = issueLoan(book, { ...draft, application_id: draft.id }, ctx, draft.calculation)
  const next: LoanApplication = { ...draft, status: 'completed', loan_id: issued.loan.id, updatedAt: ctx.now }
  return {
    book: { ...issued.book, applications: replaceWhere(issued.book.applications, 'id', next, checkApplicationChange), draftId: null },
    events: [createEvent(ctx, 'sandbox.loan.issued', issued.loan)],
  }
}
