import { nextLoanFlowAction } from '../domain/loan-flow.js'
import { nextRepaymentAction } from '../domain/loan-guards.js'
import type { LoanStateView } from '../domain/loan-book.js'
import { loanFlowActions } from '../schemas/loan-flow.js'
import { repaymentFlowActions } from '../schemas/repayment-flow.js'
import type { Scenario } from './scenario-schema.js'

const FLOW_ACTIONS: Record<'loan' | 'repayment', readonly string[]> = { loan: loanFlowActions, repayment: repaymentFlowActions }

/**
 * The spec's recovery rule, with the server's own next-step tables: from GET state, the action
 * that continues a flow, or null when the flow has nothing left to do (a settled or finished
 * repayment operation, or none).
 */
export function findNextFlowAction(state: unknown, flow: 'loan' | 'repayment', operationId?: string): string | null {
  const loans = (state as { loans?: Partial<LoanStateView> } | undefined)?.loans
  if (flow === 'loan') return nextLoanFlowAction(loans?.draft ?? null)
  const operations = loans?.sandboxFlow?.repaymentOperations ?? []
  const operation = operationId ? operations.find((op) => op.operation_id === operationId) : operations.at(-1)
  const next = operation ? nextRepaymentAction(operation) : null
  // A new start_payment is another flow, not the continuation of this one.
  return next === 'start_payment' ? null : next
}

/** Where a scenario continues after a recovery step at `index`: a step index, or why it cannot. */
export function planRecovery(scenario: Scenario, index: number, flow: 'loan' | 'repayment', next: string | null): { jumpTo: number; note: string } | { error: string } {
  const actionAt = (i: number) => {
    const step = scenario.steps[i]
    return step && 'request' in step ? (step.request.body as { action?: unknown } | undefined)?.action : undefined
  }
  const later = scenario.steps.map((_, i) => i).filter((i) => i > index)
  if (next) {
    const jumpTo = later.find((i) => actionAt(i) === next)
    if (jumpTo === undefined) return { error: `GET state says the next action is ${next}, but no later step sends it` }
    return { jumpTo, note: `state says next: ${next}, continuing at step ${jumpTo + 1}` }
  }
  const last = later.filter((i) => FLOW_ACTIONS[flow].includes(String(actionAt(i)))).at(-1)
  const jumpTo = last === undefined ? index + 1 : last + 1
  return { jumpTo, note: `state says the ${flow} flow is done, continuing at step ${jumpTo + 1}` }
}
