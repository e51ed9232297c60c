/**
 * What the spec (3.1, 4.3, 4.4) and decisions.md say a new-loan request does: the 4-step flow
 * and POST /loans, with the README's order of checks (body, then limits, then state).
 */

import { exceedsMax, feeOf, maxDebtOf, periodInterestOf } from './formulas.js'
import { conflict, findDraft, pickApp, pickLoan, refuse, unitsOf, type Amount, type Model, type ModelLoan, type Outcome } from './model.js'

/** The body of a new loan, as generated. */
export interface NewLoanBody {
  collateral?: Amount
  amount?: Amount
  currency?: string
  external_client_id?: string
  client_reference?: string
}

interface CheckedLoan {
  collateral: bigint
  amount: bigint
}

/** The 400 a new loan's fields get, or the checked figures. */
function checkNewLoan(model: Model, body: NewLoanBody): CheckedLoan | Outcome {
  const c = model.config
  const collateral = body.collateral && unitsOf(body.collateral, 8)
  const amount = body.amount && unitsOf(body.amount, 2)
  // The schema refuses a present but bad amount before anything is required.
  if (collateral === null || amount === null) return refuse(400, 'INVALID_AMOUNT')
  if (collateral === undefined) return refuse(400, 'INVALID_AMOUNT', { field: 'collateral_btc' })
  if (amount === undefined) return refuse(400, 'INVALID_AMOUNT', { field: 'loan_amount' })
  if (body.currency !== undefined && body.currency !== 'USDT') return refuse(400, 'INVALID_REQUEST', { field: 'loan_currency' })
  if (amount < c.loanMin) return refuse(400, 'INVALID_AMOUNT', { limit: 'limits.loan_amount.min' })
  if (amount > c.loanMax) return refuse(400, 'INVALID_AMOUNT', { limit: 'limits.loan_amount.max' })
  if (collateral < c.collateralMin) return refuse(400, 'INVALID_AMOUNT', { limit: 'limits.collateral_btc.min' })
  if (collateral > c.collateralMax) return refuse(400, 'INVALID_AMOUNT', { limit: 'limits.collateral_btc.max' })
  if (exceedsMax(amount, collateral, c)) {
    return refuse(400, 'INVALID_AMOUNT', { limit: 'risk.max_ltv_percent', max_loan_amount: Number(maxDebtOf(collateral, c)) / 100 })
  }
  return { collateral, amount }
}

function isOutcome(value: CheckedLoan | Outcome): value is Outcome {
  return 'ok' in value
}

type PartnerFields = Pick<NewLoanBody, 'external_client_id' | 'client_reference'>

const partnerFields = (body: PartnerFields) => ({
  ...(body.external_client_id !== undefined && { external_client_id: body.external_client_id }),
  ...(body.client_reference !== undefined && { client_reference: body.client_reference }),
})

/** Adds an issued loan to the model: the payout (amount − fee) credited, the first period's interest due. */
function issue(model: Model, id: string, loan: CheckedLoan, body: PartnerFields): ModelLoan {
  const fee = feeOf(loan.amount, model.config)
  const issued: ModelLoan = {
    id,
    status: 'active',
    debt: loan.amount,
    principal: loan.amount,
    collateral: loan.collateral,
    interestDue: periodInterestOf(loan.amount, model.config),
    fee,
    ...partnerFields(body),
    history: [
      { type: 'collateral_deposited', amount: loan.collateral, asset: 'BTC' },
      { type: 'issued', amount: loan.amount, asset: 'USDT' },
      { type: 'origination_fee', amount: fee, asset: 'USDT' },
    ],
  }
  model.loans.push(issued)
  model.usdt += loan.amount - fee
  model.accruals.push({ loanId: id, principal: loan.amount, fee })
  return issued
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const lastLoanId = (answer: any): string => answer.activeLoans.at(-1).id

/** POST /api/sandbox/loans. */
export function predictCreateLoan(model: Model, body: NewLoanBody): Outcome {
  const checked = checkNewLoan(model, body)
  if (isOutcome(checked)) return checked
  if (model.btc < checked.collateral) return conflict('INSUFFICIENT_BALANCE')
  return {
    ok: true,
    apply(m, answer) {
      const id = lastLoanId(answer)
      m.btc -= checked.collateral
      issue(m, id, checked, body)
      return [{ type: 'sandbox.loan.issued', pick: pickLoan(id) }]
    },
  }
}

/** A flow body: the action and the fields it may carry. */
export interface LoanFlowBody extends NewLoanBody {
  action: 'start_collateral_transfer' | 'confirm_btc' | 'run_kyt' | 'complete_payout'
  tx_hash?: string
  confirmations?: number
}

const NEXT = { awaiting_collateral: 'confirm_btc', collateral_confirmed: 'run_kyt', kyt_completed: 'complete_payout' } as const

/** POST /api/sandbox/loans/flow. */
export function predictLoanFlow(model: Model, body: LoanFlowBody): Outcome {
  const draft = findDraft(model)
  const outOfOrder = (wanted: string) =>
    !draft || draft.status !== wanted ? conflict('STEP_OUT_OF_ORDER', { current_status: draft?.status ?? null, expected_action: draft ? NEXT[draft.status as keyof typeof NEXT] : 'start_collateral_transfer' }) : null
  const appEvent = (id: string) => [{ type: 'sandbox.loan_application.updated', pick: pickApp(id) }]
  switch (body.action) {
    case 'start_collateral_transfer': {
      const checked = checkNewLoan(model, body)
      if (isOutcome(checked)) return checked
      if (draft) return conflict('DRAFT_ALREADY_OPEN')
      if (model.btc < checked.collateral) return conflict('INSUFFICIENT_BALANCE')
      return {
        ok: true,
        apply(m, answer) {
          const id = answer.draft.id as string
          m.apps.push({ id, status: 'awaiting_collateral', collateral: checked.collateral, amount: checked.amount, ...partnerFields(body) })
          m.draftId = id
          return appEvent(id)
        },
      }
    }
    case 'confirm_btc': {
      if (body.tx_hash === undefined || body.confirmations === undefined) return refuse(400, 'INVALID_REQUEST')
      const refused = outOfOrder('awaiting_collateral')
      if (refused) return refused
      if (body.confirmations < 2) return conflict('INSUFFICIENT_CONFIRMATIONS')
      if (model.btc < draft!.collateral) return conflict('INSUFFICIENT_BALANCE')
      return { ok: true, apply: (m) => { m.btc -= draft!.collateral; draft!.status = 'collateral_confirmed'; return appEvent(draft!.id) } }
    }
    case 'run_kyt':
      return outOfOrder('collateral_confirmed') ?? { ok: true, apply: () => { draft!.status = 'kyt_completed'; return appEvent(draft!.id) } }
    case 'complete_payout':
      return outOfOrder('kyt_completed') ?? {
        ok: true,
        apply(m, answer) {
          const id = lastLoanId(answer)
          issue(m, id, draft!, draft!)
          draft!.status = 'completed'
          draft!.loanId = id
          m.draftId = null
          return [{ type: 'sandbox.loan.issued', pick: pickLoan(id) }]
        },
      }
  }
}
