import { describe, expect, it } from 'vitest'
import { problemsOf } from '../helpers/scenario-problems.js'
import { SHIPPED_SCENARIOS_DIR, loadScenarios } from '../../src/scenarios/load-scenarios.js'

// A matcher is applied only as the whole value at a body path or header: anywhere else it was
// compared as a literal, and the step failed with a diff that read as the matcher failing.
const get = { method: 'GET', path: '/api/sandbox/config' }
const problemsOfExpect = (expect: unknown) =>
  problemsOf(JSON.stringify({ name: 'n', description: 'd', steps: [{ request: get, expect }] }))

describe('a matcher the runner would not apply', () => {
  it('inside an expected object is refused, with the path to give it instead', () => {
    expect(problemsOfExpect({ body: { rates: { btc_usd: { $gt: 1000 } } } })).toEqual([
      '1 expect.body.rates: {"$gt":1000} at btc_usd is a matcher inside a value, which is compared as written and never holds: give it a path of its own, "rates.btc_usd": {"$gt":1000}',
    ])
  })

  it('inside an expected array is refused too, the index in the path', () => {
    expect(problemsOfExpect({ body: { activeLoans: [{ id: { $match: '^loan_' } }] } })).toEqual([
      '1 expect.body.activeLoans: {"$match":"^loan_"} at 0.id is a matcher inside a value, which is compared as written and never holds: give it a path of its own, "activeLoans.0.id": {"$match":"^loan_"}',
    ])
  })

  it('mixed with plain keys is refused, with the matcher a key without $ meant', () => {
    expect(problemsOfExpect({ body: { 'rates.btc_usd': { $gt: 1, lt: 100 } } })).toEqual([
      '1 expect.body.rates.btc_usd: {"$gt":1,"lt":100} mixes matchers with other keys ("lt": did you mean $lt?), so it is compared as a value and never holds: every key of a matcher starts with $',
    ])
    expect(problemsOfExpect({ headers: { 'x-request-id': { $exists: true, value: 'x' } } })).toEqual([
      '1 expect.headers.x-request-id: {"$exists":true,"value":"x"} mixes matchers with other keys ("value"), so it is compared as a value and never holds: every key of a matcher starts with $',
    ])
  })

  it('is no problem as the whole value at a path, and no shipped scenario has one elsewhere', async () => {
    expect(() => problemsOfExpect({ body: { 'rates.btc_usd': { $gt: 1 }, rates: { btc_usd: 1 } } })).toThrow(/expected the scenario to be refused/)
    await expect(loadScenarios(SHIPPED_SCENARIOS_DIR)).resolves.not.toHaveLength(0)
  })
})

describe('a matcher for status or error_code', () => {
  it('is refused saying where a matcher goes, rather than as an object where zod expected a number or a string', () => {
    expect(problemsOfExpect({ status: 409, error_code: { $match: '^IDEMPOTENCY' } })).toEqual([
      '1 expect.error_code: the error code as text, or null for none; a matcher checks it as a body path: "body": {"error_code": {"$match":"^IDEMPOTENCY"}}',
    ])
    expect(problemsOfExpect({ status: { $gte: 400 } })).toEqual([
      '1 expect.status: the HTTP status as a whole number (200, 409, ...); a matcher is for body paths and headers',
    ])
    // Another wrong type keeps zod's words.
    expect(problemsOfExpect({ status: '200' })).toEqual(['1 expect.status: Invalid input: expected number, received string'])
  })
})
