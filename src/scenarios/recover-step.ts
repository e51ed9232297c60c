import { nextLoanFlowAction } from '../domain/loan-flow.js'
import { nextRepaymentAction } from '../domain/loan-guards.js'
import type { LoanStateView } from '../domain/loan-book.js'
import { loanFlowActions } from '../schemas/loan-flow.js'
import { repaymentFlowActions } from '../schemas/repayment-flow.js'
import { describeStep } from './describe-step.js'
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

/** A recover step's jump: from its index to the step it continued at. */
export interface RecoveryJump {
  from: number
  to: number
}

/**
 * Why VARIABLE has no value, when the step that captures it is one a recover step jumped over
 * ("not captured by an earlier step" would be wrong: it is, in the file); undefined otherwise.
 */
export function describeSkippedCapture(scenario: Scenario, variable: string, jumps: RecoveryJump[]): string | undefined {
  for (const [index, step] of scenario.steps.entries()) {
    if (!('capture' in step) || !step.capture || !Object.hasOwn(step.capture, variable)) continue
    const jump = jumps.find(({ from, to }) => from < index && index < to)
    if (!jump) continue
    const name = (at: number) => `step ${at + 1} (${describeStep(scenario.steps[at]!, at)})`
    return `{{${variable}}} has no value: ${name(index)}, which captures it, was skipped when ${name(jump.from)} continued at step ${jump.to + 1}; capture it in a step that runs either way`
  }
  return undefined
}
