import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/server/canonical-json.js'
import { createHash } from 'node:crypto'
import { fingerprintRequest, isSameRequest } from '../../src/server/idempotency.js'

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

  it('still matches a record an older server stored for a request with no body (fingerprinted as null), sent again with no body or {}', () => {
    const path = '/api/sandbox/webhooks/retry'
    const older = createHash('sha256').update(`POST ${path}\nnull`).digest('hex')
    expect(isSameRequest(older, fingerprintRequest('POST', path, undefined), 'POST', path, undefined)).toBe(true)
    expect(isSameRequest(older, fingerprintRequest('POST', path, {}), 'POST', path, {})).toBe(true)
    const named = { delivery_id: 'whd_1' }
    expect(isSameRequest(older, fingerprintRequest('POST', path, named), 'POST', path, named)).toBe(false)
    expect(isSameRequest(older, fingerprintRequest('POST', '/api/sandbox/webhooks/test', {}), 'POST', '/api/sandbox/webhooks/test', {})).toBe(false)
  })
})
