import { SandboxError, flowConflict } from '../errors/sandbox-error.js'

/**
 * Checks shared by the loan and repayment flows: step order, simulated transfer confirmations
 * and per-step required fields.
 */

/** 409 FLOW_CONFLICT STEP_OUT_OF_ORDER naming the status and the action that would be valid now (or `message`, where those alone would mislead). */
export function stepOutOfOrder(action: string, currentStatus: string | null, expectedAction: string | null, extra: Record<string, unknown> = {}, message?: string): SandboxError {
  const now = expectedAction ? ` The next valid action is ${expectedAction}.` : ''
  const state = currentStatus ? `from status ${currentStatus}` : 'now'
  return flowConflict('STEP_OUT_OF_ORDER', message ?? `${action} is not allowed ${state}.${now}`, {
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

/** A confirmation's fields once checked. */
export interface CheckedTransfer {
  txHash: string
  confirmations: number
}

/**
 * Checks a `confirm_btc` / `confirm_usdt` body's own fields: 400 INVALID_REQUEST for a missing or
 * empty `tx_hash` or a missing `confirmations`. Called before the flow's state is looked at, so
 * a malformed step gets the same 400 whatever state the flow is in.
 */
export function readTransfer(input: TransferConfirmation): CheckedTransfer {
  const { tx_hash: txHash, confirmations } = input
  if (typeof txHash !== 'string' || txHash.length === 0) {
    throw new SandboxError('INVALID_REQUEST', 'tx_hash is required.', { field: 'tx_hash', issue: 'is required' })
  }
  if (typeof confirmations !== 'number' || !Number.isInteger(confirmations) || confirmations < 0) {
    throw new SandboxError('INVALID_REQUEST', 'confirmations is required.', { field: 'confirmations', issue: 'is required' })
  }
  return { txHash, confirmations }
}

/** 409 FLOW_CONFLICT INSUFFICIENT_CONFIRMATIONS below `required`; returns the tx hash. */
export function requireConfirmations(transfer: CheckedTransfer, required: number): string {
  if (transfer.confirmations < required) {
    throw flowConflict('INSUFFICIENT_CONFIRMATIONS', `${transfer.confirmations} confirmations received; ${required} are required.`, {
      required,
      received: transfer.confirmations,
    })
  }
  return transfer.txHash
}

/** Returns `value` or throws 400 INVALID_AMOUNT naming the missing `field`. */
export function requireAmount(field: string, value: number | undefined, action: string): number {
  if (value === undefined) {
    throw new SandboxError('INVALID_AMOUNT', `${field} is required for ${action}.`, { field, issue: 'is required' })
  }
  return value
}
