import { describe, expect, it } from 'vitest'
import { interpolate } from '../../src/scenarios/interpolate.js'
import { readPath } from '../../src/scenarios/json-path.js'
import { matchValue } from '../../src/scenarios/match-value.js'
import { findNextFlowAction, planRecovery } from '../../src/scenarios/recover-step.js'
import { parseScenario } from '../../src/scenarios/load-scenarios.js'
import { isLoopbackUrl, selectScenarios } from '../../src/scenarios/select-scenarios.js'
import { checkAnswer } from '../../src/scenarios/check-expectation.js'

const body = {
  wallet: { BTC: 1.5 },
  activeLoans: [{ id: 'loan_a', debt: 10 }, { id: 'loan_b', debt: 20 }],
  sandboxFlow: { loanApplications: [{ id: 'app_1', loan_id: 'loan_b' }] },
}

describe('scenario paths', () => {
  it('reads keys, indexes from either end and filtered elements', () => {
    expect(readPath(body, 'wallet.BTC')).toBe(1.5)
    expect(readPath(body, 'activeLoans.0.id')).toBe('loan_a')
    expect(readPath(body, 'activeLoans.-1.debt')).toBe(20)
    expect(readPath(body, 'activeLoans[id=loan_b].debt')).toBe(20)
    expect(readPath(body, 'sandboxFlow.loanApplications[id=app_1].loan_id')).toBe('loan_b')
    // [?field=value] keeps every match, in order, so indexes count among them only.
    expect(readPath(body, 'activeLoans[?debt=20]')).toEqual([{ id: 'loan_b', debt: 20 }])
    expect(readPath(body, 'activeLoans[?debt=20].0.id')).toBe('loan_b')
    expect(readPath(body, 'activeLoans[?debt=99]')).toEqual([])
    // Bracketed indexes, as in JavaScript, read like dotted ones.
    expect(readPath(body, 'activeLoans[1].id')).toBe('loan_b')
    expect(readPath(body, 'activeLoans[-1].debt')).toBe(20)
  })

  it('refuses a path it cannot read whole instead of guessing', () => {
    for (const path of ['activeLoans[id=.x', 'wallet..BTC', '.wallet', 'wallet]']) expect(() => readPath(body, path), path).toThrow(/cannot read the path/)
  })

  it('answers undefined for anything missing instead of throwing', () => {
    expect(readPath(body, 'activeLoans[id=loan_x].debt')).toBeUndefined()
    expect(readPath(body, 'wallet.BTC.deeper')).toBeUndefined()
    expect(readPath(body, 'activeLoans.7')).toBeUndefined()
    expect(readPath(null, 'a')).toBeUndefined()
    expect(readPath(body, 'constructor')).toBeUndefined()
  })
})

describe('scenario matchers', () => {
  it('compares literals deeply', () => {
    expect(matchValue({ a: [1, 2] }, { a: [1, 2] })).toBeNull()
    expect(matchValue(1, 2)).toBe('expected 2, got 1')
    expect(matchValue(undefined, null)).toBe('expected null, got (missing)')
  })

  it('applies every operator of a matcher', () => {
    expect(matchValue('loan_1', { $match: '^loan_' })).toBeNull()
    expect(matchValue('app_1', { $match: '^loan_' })).toMatch(/\$match/)
    expect(matchValue(5, { $gt: 1, $lt: 10 })).toBeNull()
    expect(matchValue(10, { $gt: 1, $lt: 10 })).toMatch(/\$lt 10, got 10/)
    expect(matchValue(undefined, { $exists: false })).toBeNull()
    expect(matchValue(0, { $exists: false })).not.toBeNull()
    expect(matchValue([1, 2, 3], { $length: 3, $contains: 2 })).toBeNull()
    expect(matchValue('x', { $type: 'number' })).toBe('expected $type "number", got "x"')
    expect(matchValue([], { $type: 'array' })).toBeNull()
    expect(matchValue('b', { $oneOf: ['a', 'b'] })).toBeNull()
    expect(matchValue('c', { $ne: 'c' })).not.toBeNull()
    // A missing value fails $ne too: a typo in the path must not pass.
    expect(matchValue(undefined, { $ne: 0 })).toBe('expected $ne 0, got (missing)')
    // An operand that came from a variable is checked when it is known.
    expect(matchValue(5, { $gt: 'x' })).toBe('$gt needs a number, got "x"')
    // A number is looked for as its digits; a missing value has the type "undefined".
    expect(matchValue('client-100', { $match: 100 })).toBeNull()
    expect(matchValue(undefined, { $type: 'undefined' })).toBeNull()
  })

  it('checks status, error_code, body and headers and expects 2xx by default', () => {
    const answer = { status: 409, errorCode: 'FLOW_CONFLICT', body: { details: { reason: 'LTV_LIMIT' } }, headers: new Headers({ 'x-request-id': 'req_1' }) }
    expect(checkAnswer(answer, { status: 409, error_code: 'FLOW_CONFLICT', body: { 'details.reason': 'LTV_LIMIT' }, headers: { 'X-Request-Id': { $match: '^req_' } } })).toEqual([])
    expect(checkAnswer(answer).map((failure) => failure.message)).toEqual(['status: expected 2xx, got 409 FLOW_CONFLICT'])
    expect(checkAnswer(answer, { error_code: 'FLOW_CONFLICT' })).toEqual([])
    const wrong = checkAnswer(answer, { status: 200, body: { 'details.reason': 'X' } })
    expect(wrong.map((failure) => failure.field)).toEqual(['status', 'body.details.reason'])
    expect(wrong[0]).toMatchObject({ expected: 200, actual: 409 })
  })
})

describe('scenario variables', () => {
  const variables = new Map<string, unknown>([['loanId', 'loan_1'], ['amount', 25]])

  it('replaces references in every string and keeps the type of a whole reference', () => {
    expect(interpolate({ path: '/loans/{{loanId}}/action', amount: '{{amount}}', list: ['{{ loanId }}'] }, variables))
      .toEqual({ path: '/loans/loan_1/action', amount: 25, list: ['loan_1'] })
  })

  it('gives a fresh uuid per use and refuses unknown names', () => {
    const a = interpolate('{{$uuid}}', variables)
    expect(a).toMatch(/^[0-9a-f-]{36}$/)
    expect(interpolate('{{$uuid}}', variables)).not.toBe(a)
    expect(() => interpolate('{{nope}}', variables)).toThrow('unknown variable {{nope}}')
  })

  it('refuses an object or array inside a text, where it would read [object Object]', () => {
    const held = new Map<string, unknown>([['loan', { id: 'loan_1' }]])
    expect(interpolate({ loan: '{{loan}}' }, held)).toEqual({ loan: { id: 'loan_1' } })
    expect(() => interpolate('/loans/{{loan}}', held)).toThrow('{{loan}} holds an object: use it as a whole value ("{{loan}}"), not inside a text')
    // An array reads as its items joined with commas, as it always did.
    expect(interpolate('cur-{{list}}', new Map<string, unknown>([['list', ['USDT', 'BTC']]]))).toBe('cur-USDT,BTC')
  })
})

describe('recovery from GET state', () => {
  const state = (draft: unknown, operations: unknown[] = []) => ({ loans: { draft, sandboxFlow: { repaymentOperations: operations } } })

  it('finds the next loan-flow action from the draft', () => {
    expect(findNextFlowAction(state(null), 'loan')).toBe('start_collateral_transfer')
    expect(findNextFlowAction(state({ status: 'awaiting_collateral' }), 'loan')).toBe('confirm_btc')
    expect(findNextFlowAction(state({ status: 'collateral_confirmed' }), 'loan')).toBe('run_kyt')
    expect(findNextFlowAction(state({ status: 'kyt_completed' }), 'loan')).toBe('complete_payout')
  })

  it('finds the next repayment action of the named operation', () => {
    const operations = [
      { operation_id: 'op_1', status: 'payment_confirmed', repayment_kind: 'interest' },
      { operation_id: 'op_2', status: 'settled', repayment_kind: 'full_principal' },
    ]
    expect(findNextFlowAction(state(null, operations), 'repayment', 'op_1')).toBe('run_kyt')
    expect(findNextFlowAction(state(null, operations), 'repayment', 'op_2')).toBe('complete_collateral_return')
    expect(findNextFlowAction(state(null, operations), 'repayment')).toBe('complete_collateral_return')
    expect(findNextFlowAction(state(null, [{ operation_id: 'op_3', status: 'settled', repayment_kind: 'interest' }]), 'repayment')).toBeNull()
    expect(findNextFlowAction(state(null, []), 'repayment')).toBeNull()
  })
})

describe('planning where a recovery continues', () => {
  const flow = (action: string) => ({ request: { method: 'POST', path: '/api/sandbox/loans/flow', body: { action } } })
  const scenario = parseScenario('r.json', JSON.stringify({
    name: 'r', description: 'r',
    steps: [flow('start_collateral_transfer'), { recover: { flow: 'loan' } }, flow('confirm_btc'), flow('run_kyt'), flow('complete_payout'), { request: { method: 'GET', path: '/api/sandbox/loans' } }],
  }))

  it('jumps to the later step that sends the next action', () => {
    expect(planRecovery(scenario, 1, 'loan', 'run_kyt')).toEqual({ jumpTo: 3, note: 'state says next: run_kyt, continuing at step 4' })
  })

  it('continues after the flow when it is done, and fails when no step sends the action', () => {
    expect(planRecovery(scenario, 1, 'loan', null)).toEqual({ jumpTo: 5, note: 'state says the loan flow is done, continuing at step 6' })
    expect(planRecovery(scenario, 1, 'loan', 'start_collateral_transfer')).toEqual({ error: 'GET state says the next action is start_collateral_transfer, but no later step sends it' })
  })
})

describe('choosing scenarios', () => {
  const scenario = (id: string, tags: string[]) => ({ id, tags, name: id, description: id, file: `${id}.json`, steps: [] })
  const all = [scenario('a', ['x']), scenario('b', ['y', 'local-only']), scenario('c', ['x'])]

  it('selects by id in the order named, by tag, or all', () => {
    expect(selectScenarios(all, ['c', 'a']).map((s) => s.id)).toEqual(['c', 'a'])
    expect(selectScenarios(all, [], ['x']).map((s) => s.id)).toEqual(['a', 'c'])
    expect(selectScenarios(all).map((s) => s.id)).toEqual(['a', 'b', 'c'])
    expect(() => selectScenarios(all, ['a', 'zz'])).toThrow('unknown scenario zz; known: a, b, c')
  })

  it('tells a local base URL from a remote one', () => {
    expect(isLoopbackUrl('http://127.0.0.1:4010')).toBe(true)
    expect(isLoopbackUrl('http://localhost:4010/')).toBe(true)
    expect(isLoopbackUrl('http://[::1]:4010')).toBe(true)
    expect(isLoopbackUrl('https://sandbox.example.com')).toBe(false)
  })

  it('takes an IPv4-mapped loopback address, localhost with a trailing dot and 0.0.0.0 for this machine, and nothing else near them', () => {
    expect(isLoopbackUrl('http://[::ffff:127.0.0.1]:4010')).toBe(true)
    expect(isLoopbackUrl('http://[::ffff:7f00:1]:4010')).toBe(true)
    expect(isLoopbackUrl('http://localhost.:4010')).toBe(true)
    expect(isLoopbackUrl('http://LOCALHOST:4010')).toBe(true)
    expect(isLoopbackUrl('http://127.1:4010')).toBe(true)
    expect(isLoopbackUrl('http://0.0.0.0:4010')).toBe(true)
    expect(isLoopbackUrl('http://[::]:4010')).toBe(true)
    expect(isLoopbackUrl('http://[::ffff:10.0.0.1]:4010')).toBe(false)
    expect(isLoopbackUrl('http://localhost.example.com:4010')).toBe(false)
    expect(isLoopbackUrl('http://127.0.0.1.nip.io:4010')).toBe(false)
    expect(isLoopbackUrl('http://[fe80::1]:4010')).toBe(false)
  })
})
