/** GET state's answer, as far as recovery reads it. */
interface StateAnswer {
  loans?: {
    draft?: { status?: string } | null
    sandboxFlow?: { repaymentOperations?: Array<{ operation_id?: string; status?: string; repayment_kind?: string }> }
  }
}

const LOAN_NEXT: Record<string, string> = {
  awaiting_collateral: 'confirm_btc',
  collateral_confirmed: 'run_kyt',
  kyt_completed: 'complete_payout',
}

const REPAYMENT_NEXT: Record<string, string> = {
  awaiting_payment: 'confirm_usdt',
  payment_confirmed: 'run_kyt',
  kyt_completed: 'complete_settlement',
}

/**
 * The spec's recovery rule: from GET state, the action that continues a flow, or null when the
 * flow has nothing left to do (no open draft; a settled or finished operation).
 */
export function findNextFlowAction(state: unknown, flow: 'loan' | 'repayment', operationId?: string): string | null {
  const loans = (state as StateAnswer)?.loans
  if (flow === 'loan') {
    const status = loans?.draft?.status
    return status ? (LOAN_NEXT[status] ?? null) : 'start_collateral_transfer'
  }
  const operations = loans?.sandboxFlow?.repaymentOperations ?? []
  const operation = operationId ? operations.find((op) => op.operation_id === operationId) : operations.at(-1)
  if (!operation?.status) return null
  if (operation.status === 'settled') return operation.repayment_kind === 'full_principal' ? 'complete_collateral_return' : null
  return REPAYMENT_NEXT[operation.status] ?? null
}
