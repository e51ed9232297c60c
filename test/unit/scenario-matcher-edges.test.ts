import { describe, expect, it } from 'vitest'
import { checkAnswer, describeFailures } from '../../src/scenarios/check-expectation.js'
import { findMatcherProblems, matchValue, show } from '../../src/scenarios/match-value.js'

// Edges of the scenario matchers and failure reports that a step's pass or fail turns on.
const answer = (status: number, headers: Record<string, string> = {}) => ({ status, errorCode: null, body: {}, headers: new Headers(headers) })

describe('a step without an expected status', () => {
  it('passes 299 and fails 300: "expects a 2xx" ends at 299', () => {
    expect(checkAnswer(answer(299))).toEqual([])
    expect(checkAnswer(answer(300)).map((failure) => failure.message)).toEqual(['status: expected 2xx, got 300'])
  })
})

describe('a failed header expectation', () => {
  it('is shown as expected and received values, like a body path', () => {
    const failures = checkAnswer(answer(200, { 'X-Request-Id': 'req_1' }), { headers: { 'X-Request-Id': 'req_2' } })
    expect(describeFailures(failures)).toEqual(['header x-request-id', '  - expected "req_2"', '  + received "req_1"'])
  })
})

describe('a header holding a number', () => {
  // A header's value is text: `"ratelimit-remaining": {"$gt": 0}` could never hold, nor could 120.
  const limited = answer(200, { 'RateLimit-Limit': '120', 'RateLimit-Remaining': '119', 'Retry-After': 'soon' })

  it('is read as a number against a number or $gt, $gte, $lt, $lte, and as text otherwise', () => {
    expect(checkAnswer(limited, { headers: { 'ratelimit-limit': 120, 'ratelimit-remaining': { $gt: 0, $lt: 120 } } })).toEqual([])
    expect(checkAnswer(limited, { headers: { 'ratelimit-limit': '120', 'ratelimit-remaining': { $match: '^\\d+$', $type: 'string' } } })).toEqual([])
    expect(checkAnswer(limited, { headers: { 'ratelimit-remaining': { $gte: 120 } } }).map((failure) => failure.message)).toEqual(['header ratelimit-remaining: expected $gte 120, got 119'])
  })

  it('that is no number still fails a numeric check, shown as the text it is', () => {
    expect(checkAnswer(limited, { headers: { 'retry-after': { $gt: 0 }, 'ratelimit-limit': 121 } }).map((failure) => failure.message))
      .toEqual(['header retry-after: expected $gt 0, got "soon"', 'header ratelimit-limit: expected 121, got 120'])
  })
})

describe('matcher bounds', () => {
  it('$lte holds at the bound, $lt does not', () => {
    expect(matchValue(5, { $lte: 5 })).toBeNull()
    expect(matchValue(6, { $lte: 5 })).toBe('expected $lte 5, got 6')
    expect(matchValue(5, { $lt: 5 })).toBe('expected $lt 5, got 5')
  })

  it('$contains finds a substring in a text', () => {
    expect(matchValue('loan_abc is active', { $contains: 'abc' })).toBeNull()
    expect(matchValue('loan_abc', { $contains: 'xyz' })).toBe('expected $contains "xyz", got "loan_abc"')
  })

  it('$length takes 0 (an empty list) and refuses a negative number', () => {
    expect(findMatcherProblems({ $length: 0 })).toEqual([])
    expect(matchValue([], { $length: 0 })).toBeNull()
    expect(findMatcherProblems({ $length: -1 })).toEqual(['$length needs a whole number from 0, got -1'])
  })

  it('an empty object is a literal, not a matcher that holds for anything', () => {
    expect(matchValue({}, {})).toBeNull()
    expect(matchValue({ a: 1 }, {})).toBe('expected {}, got {"a":1}')
  })
})

describe('values in reports', () => {
  it('are cut to 200 characters', () => {
    const long = 'x'.repeat(300)
    expect(show(long)).toHaveLength(200)
    expect(show(long).endsWith('...')).toBe(true)
    expect(show('x'.repeat(198))).toBe(JSON.stringify('x'.repeat(198)))
  })
})
