import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/server/canonical-json.js'
import { fingerprintRequest } from '../../src/server/idempotency.js'

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}')
  })

  it('drops undefined members like JSON.stringify', () => {
    expect(canonicalJson({ a: undefined, b: 'x' })).toBe('{"b":"x"}')
  })
})

describe('fingerprintRequest', () => {
  it('is equal for the same body in another key order and differs by method, path or body', () => {
    const base = fingerprintRequest('POST', '/api/sandbox/loans', { loan_amount: 1, collateral_btc: 2 })
    expect(fingerprintRequest('POST', '/api/sandbox/loans', { collateral_btc: 2, loan_amount: 1 })).toBe(base)
    expect(fingerprintRequest('POST', '/api/sandbox/loans/flow', { collateral_btc: 2, loan_amount: 1 })).not.toBe(base)
    expect(fingerprintRequest('POST', '/api/sandbox/loans', { collateral_btc: 2, loan_amount: 3 })).not.toBe(base)
    expect(fingerprintRequest('PUT', '/api/sandbox/loans', { collateral_btc: 2, loan_amount: 1 })).not.toBe(base)
  })
})
