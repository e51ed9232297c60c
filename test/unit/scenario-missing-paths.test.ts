import { describe, expect, it } from 'vitest'
import { checkBody, describeFailures } from '../../src/scenarios/check-expectation.js'
import { capture } from '../../src/scenarios/capture-values.js'
import type { StepFailure } from '../../src/scenarios/report-types.js'

// A long answer is cut in the report, often before the part a path reads: a path that finds
// nothing says where it stops and what is there, so that the scenario can be fixed without --verbose.
const answer = {
  wallet: { BTC: 1.5, USDT: 10 },
  draft: null,
  activeLoans: [{ id: 'loan_a', debt: 200, history: [{ type: 'issued' }, { type: 'interest_paid' }] }],
}

function failuresFor(expected: Record<string, unknown>): StepFailure[] {
  const failures: StepFailure[] = []
  checkBody(failures, answer, expected)
  return failures
}

describe('a body path that finds nothing', () => {
  it('names the key a typo meant, or the keys there are', () => {
    expect(failuresFor({ 'walet.BTC': 1 })[0]!.hint).toBe('the body has no walet (did you mean wallet?)')
    expect(failuresFor({ 'wallet.ETH': 1 })[0]!.hint).toBe('wallet has no ETH; its keys: BTC, USDT')
  })

  it('says how many elements a list has for an index past its end', () => {
    expect(failuresFor({ 'activeLoans.1.debt': 200 })[0]!.hint).toBe('activeLoans has 1 element, so there is no index 1')
    expect(failuresFor({ 'activeLoans.0.history.-3': 1 })[0]!.hint).toBe('activeLoans.0.history has 2 elements, so there is no index -3')
  })

  it('lists the values a filter could have picked', () => {
    expect(failuresFor({ 'activeLoans[id=loan_b].debt': 200 })[0]!.hint).toBe('no element of activeLoans has id=loan_b (id there: loan_a)')
    // An empty [?...] list is a value, but the filter is still why the check failed.
    expect(failuresFor({ 'activeLoans.0.history[?type=interest_repaid]': { $length: 1 } })[0]!.hint)
      .toBe('no element of activeLoans.0.history has type=interest_repaid (type there: issued, interest_paid)')
  })

  it('says what a path tried to read into', () => {
    expect(failuresFor({ 'draft.id': 'app_1' })[0]!.hint).toBe('draft is null')
    expect(failuresFor({ 'activeLoans.id': 'loan_a' })[0]!.hint).toBe('activeLoans is a list: pick an element by index (activeLoans.0) or by a field (activeLoans[id=...])')
    expect(failuresFor({ 'wallet.BTC.amount': 1 })[0]!.hint).toBe('wallet.BTC is 1.5, not an object or a list')
  })

  it('is shown under the diff and in the message, and not for a value that is there', () => {
    const failures = failuresFor({ 'activeLoans.1.debt': 200, 'wallet.BTC': 2 })
    expect(describeFailures(failures)).toEqual([
      'body.activeLoans.1.debt', '  - expected 200', '  + received (missing): activeLoans has 1 element, so there is no index 1',
      'body.wallet.BTC', '  - expected 2', '  + received 1.5',
    ])
    expect(failures[0]!.message).toBe('body.activeLoans.1.debt: expected 200, got (missing): activeLoans has 1 element, so there is no index 1')
    expect(failures[1]!.hint).toBeUndefined()
  })

  it('is told for a capture too', () => {
    expect(capture({ loanId: 'activeLoan.0.id' }, answer, new Map()).map((failure) => failure.message))
      .toEqual(['capture loanId: nothing at activeLoan.0.id: the body has no activeLoan (did you mean activeLoans?)'])
  })
})
