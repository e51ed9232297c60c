import { describe, expect, it } from 'vitest'
import { createLoanSchema } from '../../src/schemas/create-loan.js'
import { loanActionSchema } from '../../src/schemas/loan-action.js'
import { loanFlowSchema } from '../../src/schemas/loan-flow.js'
import { parseBody } from '../../src/schemas/parse-body.js'
import { repaymentFlowSchema } from '../../src/schemas/repayment-flow.js'
import { emptyBodySchema } from '../../src/schemas/webhooks.js'
import { expectError } from './domain-helpers.js'

describe('parseBody', () => {
  it('returns the parsed body without unknown fields', () => {
    const parsed = parseBody(loanFlowSchema, { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000, extra: 1 })
    expect(parsed).toEqual({ action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000 })
  })

  it('fills the default currency of a direct loan', () => {
    expect(parseBody(createLoanSchema, { collateral_btc: 0.5, loan_amount: 20000 }).loan_currency).toBe('USDT')
  })

  it.each([[null], [[1, 2]], ['text'], [42]])('rejects a body that is not an object (%j) as INVALID_REQUEST', (body) => {
    const error = expectError(() => parseBody(loanFlowSchema, body), 'INVALID_REQUEST')
    expect(error.status).toBe(400)
    expect(error.details).toEqual({ field: 'body', issue: 'must be a JSON object' })
  })

  it('reads no body at all as an empty object, which the schema then judges', () => {
    expectError(() => parseBody(loanFlowSchema, undefined), 'INVALID_ACTION')
    expect(parseBody(emptyBodySchema, undefined)).toEqual({})
  })

  it('maps a missing action to INVALID_ACTION listing the allowed actions', () => {
    const error = expectError(() => parseBody(loanFlowSchema, {}), 'INVALID_ACTION')
    expect(error.details).toMatchObject({ field: 'action', issue: 'is required', allowed: ['start_collateral_transfer', 'confirm_btc', 'run_kyt', 'complete_payout'] })
  })

  it('maps an action of another endpoint to INVALID_ACTION', () => {
    const error = expectError(() => parseBody(repaymentFlowSchema, { action: 'confirm_btc' }), 'INVALID_ACTION')
    expect(error.details).toMatchObject({ field: 'action', issue: expect.stringContaining('must be one of: start_payment') })
  })

  it.each([
    [loanFlowSchema, { action: 'start_collateral_transfer', collateral_btc: '0.5' }, 'collateral_btc', 'must be a finite number'],
    [createLoanSchema, { collateral_btc: 0.5 }, 'loan_amount', 'is required'],
    [createLoanSchema, { collateral_btc: -1, loan_amount: 100 }, 'collateral_btc', 'must be greater than 0'],
    [createLoanSchema, { collateral_btc: 0.5, loan_amount: 100.001 }, 'loan_amount', 'must have at most 2 decimal places'],
    [createLoanSchema, { collateral_btc: 0.123456789, loan_amount: 100 }, 'collateral_btc', 'must have at most 8 decimal places'],
    [loanActionSchema, { action: 'add_collateral', amount: 0 }, 'amount', 'must be greater than 0'],
    [loanActionSchema, { action: 'repay_interest', amount: '100' }, 'amount', 'must be a finite number'],
    [repaymentFlowSchema, { action: 'start_payment', repayment_kind: 'everything' }, 'repayment_kind', 'must be one of: interest, partial_principal, full_principal'],
    [repaymentFlowSchema, { action: 'start_payment', full_repayment: 'yes' }, 'full_repayment', 'must be a boolean'],
  ])('maps a bad amount field to INVALID_AMOUNT (%#)', (schema, body, field, issue) => {
    const error = expectError(() => parseBody(schema, body), 'INVALID_AMOUNT')
    expect(error.details).toEqual({ field, issue })
  })

  it.each([
    [loanFlowSchema, { action: 'confirm_btc', tx_hash: 12 }, 'tx_hash', 'must be a string'],
    [loanFlowSchema, { action: 'confirm_btc', tx_hash: '' }, 'tx_hash', 'must not be empty'],
    [loanFlowSchema, { action: 'confirm_btc', confirmations: 1.5 }, 'confirmations', 'must be an integer'],
    [loanFlowSchema, { action: 'confirm_btc', confirmations: -1 }, 'confirmations', 'must be at least 0'],
    [loanFlowSchema, { action: 'start_collateral_transfer', external_client_id: 7 }, 'external_client_id', 'must be a string'],
    [repaymentFlowSchema, { action: 'confirm_usdt', operation_id: ['rop_1'] }, 'operation_id', 'must be a string'],
  ])('maps any other bad field to INVALID_REQUEST (%#)', (schema, body, field, issue) => {
    const error = expectError(() => parseBody(schema, body), 'INVALID_REQUEST')
    expect(error.details).toEqual({ field, issue })
  })

  it('names the field a misspelt one meant, and the value a misspelt one meant, in the message only', () => {
    const missing = expectError(() => parseBody(createLoanSchema, { colateral_btc: 0.5, loan_amount: 100 }), 'INVALID_AMOUNT')
    expect(missing.message).toBe('collateral_btc is required. The body has "colateral_btc", which is no field of this request: did you mean collateral_btc?')
    expect(missing.details).toEqual({ field: 'collateral_btc', issue: 'is required' })
    const action = expectError(() => parseBody(loanFlowSchema, { action: 'start_colateral_transfer' }), 'INVALID_ACTION')
    expect(action.message).toBe('action must be one of: start_collateral_transfer, confirm_btc, run_kyt, complete_payout. Got "start_colateral_transfer": did you mean start_collateral_transfer?')
    const kind = expectError(() => parseBody(repaymentFlowSchema, { action: 'start_payment', repayment_kind: 'partal_principal' }), 'INVALID_AMOUNT')
    expect(kind.message).toMatch(/\. Got "partal_principal": did you mean partial_principal\?$/)
    // A field sent but refused is no missing one: a look-alike unknown field beside it is not offered for it.
    expect(expectError(() => parseBody(createLoanSchema, { collateral_btc: -1, colateral_btc: 0.5, loan_amount: 100 }), 'INVALID_AMOUNT').message).toBe('collateral_btc must be greater than 0.')
    // Nothing close, nothing added: an unknown field unlike the missing one, a value unlike any allowed.
    expect(expectError(() => parseBody(createLoanSchema, { btc: 0.5, loan_amount: 100 }), 'INVALID_AMOUNT').message).toBe('collateral_btc is required.')
    expect(expectError(() => parseBody(repaymentFlowSchema, { action: 'start_payment', repayment_kind: 'everything' }), 'INVALID_AMOUNT').message).toBe('repayment_kind must be one of: interest, partial_principal, full_principal.')
  })

  it('reports the action first and lists every failed field', () => {
    const error = expectError(() => parseBody(loanFlowSchema, { action: 'nope', loan_amount: 'x', tx_hash: 1 }), 'INVALID_ACTION')
    expect(error.details?.field).toBe('action')
    expect(error.details?.issues).toEqual([
      { field: 'action', issue: expect.any(String) },
      { field: 'loan_amount', issue: 'must be a finite number' },
      { field: 'tx_hash', issue: 'must be a string' },
    ])
  })

  it('prefers INVALID_AMOUNT over INVALID_REQUEST when both kinds of field fail', () => {
    const error = expectError(() => parseBody(loanFlowSchema, { action: 'confirm_btc', tx_hash: 1, collateral_btc: -2 }), 'INVALID_AMOUNT')
    expect(error.details).toMatchObject({ field: 'collateral_btc', issue: 'must be greater than 0' })
    expect(error.message).toBe('collateral_btc must be greater than 0.')
  })
})
