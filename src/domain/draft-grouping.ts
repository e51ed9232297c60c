import { SandboxError } from '../errors/sandbox-error.js'
import type { LoanFlowInput } from '../schemas/loan-flow.js'
import type { LoanApplication } from './types.js'

const GROUPING_FIELDS = ['external_client_id', 'client_reference'] as const

/**
 * A later flow step may repeat the deal grouping fields its application was started with, but not
 * bring others: the loan takes those of `start_collateral_transfer`, so a value first sent with
 * `complete_payout` was dropped with a 200, and the loan was missing from the partner's deals
 * with no word of why. 400 INVALID_REQUEST naming the field and the application's value.
 */
export function assertSameGrouping(draft: LoanApplication, input: LoanFlowInput): void {
  for (const field of GROUPING_FIELDS) {
    const sent = input[field]
    const held = draft[field] ?? null
    if (sent === undefined || sent === held) continue
    const message = held === null
      ? `Application ${draft.id} was started without ${field}, and a later step cannot add one: the fields that group deals are taken at start_collateral_transfer. Leave it out of this step.`
      : `${field} ${JSON.stringify(sent)} differs from application ${draft.id}'s ${JSON.stringify(held)}: the fields that group deals are taken at start_collateral_transfer; on later steps send the same value or none.`
    throw new SandboxError(
      'INVALID_REQUEST',
      message,
      { field, issue: 'differs from the open application', application_id: draft.id, application_value: held },
    )
  }
}
