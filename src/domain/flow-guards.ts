import { SandboxError, flowConflict } from '../errors/sandbox-error.js'

/**
 * Checks shared by the loan and repayment flows: step order, simulated transfer confirmations
 * and per-step required fields.
 */

/** 409 FLOW_CONFLICT STEP_OUT_OF_ORDER naming the status and the action that would be valid now. */
export function stepOutOfOrder(action: string, currentStatus: string | null, expectedAction: string | null, extra: Record<string, unknown> = {}): SandboxError {
  const now = expectedAction ? ` The next valid action is ${expectedAction}.` : ''
  const state = currentStatus ? `from status ${currentStatus}` : 'now'
  return flowConflict('STEP_OUT_OF_ORDER', `${action} is not allowed ${state}.${now}`, {
    action,
    current_status: currentStatus,
    expected_action: expectedAction,
    ...extra,
  })
}

/** The fields of a simulated transfer confirmation. */
export interface TransferConfirmation {
  tx_hash?: string | undefined
  confirmations?: number | undefined
}

/**
 * Checks a `confirm_btc` / `confirm_usdt` body: 400 INVALID_REQUEST for a missing or empty
 * `tx_hash` or missing `confirmations`, 409 INSUFFICIENT_CONFIRMATIONS below `required`.
 * Returns the tx hash.
 */
export function assertTransferConfirmed(input: TransferConfirmation, required: number): string {
  const { tx_hash: txHash, confirmations } = input
  if (typeof txHash !== 'string' || txHash.length === 0) {
    throw new SandboxError('INVALID_REQUEST', 'tx_hash is required.', { field: 'tx_hash', issue: 'is required' })
  }
  if (typeof confirmations !== 'number' || !Number.isInteger(confirmations) || confirmations < 0) {
    throw new SandboxError('INVALID_REQUEST', 'confirmations is required.', { field: 'confirmations', issue: 'must be a non-negative integer' })
  }
  if (confirmations < required) {
    throw flowConflict('INSUFFICIENT_CONFIRMATIONS', `${confirmations} confirmations received; ${required} are required.`, {
      required,
      received: confirmations,
    })
  }
  return txHash
}

/** Returns `value` or throws 400 INVALID_AMOUNT naming the missing `field`. */
export function requireAmount(field: string, value: number | undefined, action: string): number {
  if (value === undefined) {
    throw new SandboxError('INVALID_AMOUNT', `${field} is required for ${action}.`, { field, issue: 'is required' })
  }
  return value
}
