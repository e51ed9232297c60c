import { describe, expect, it } from 'vitest'
import { prepareRequest } from '../../src/client/prepare-request.js'

// Which requests carry an Idempotency-Key, as the client puts them on the wire.
const options = { baseUrl: 'http://127.0.0.1:1' }

describe('the Idempotency-Key the client sends', () => {
  it('is generated for a POST only, never for a GET or DELETE', () => {
    const post = prepareRequest(options, { method: 'POST', path: '/a', body: {} })
    expect(post.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/)
    expect(post.idempotencyKey).toBe(post.headers['idempotency-key'])
    for (const method of ['GET', 'DELETE'] as const) {
      const wire = prepareRequest(options, { method, path: '/a' })
      expect(wire.idempotencyKey).toBeNull()
      expect(wire.headers).not.toHaveProperty('idempotency-key')
    }
  })

  it('is not sent at all with idempotencyKey null, even if the headers name one', () => {
    const wire = prepareRequest(options, { method: 'POST', path: '/a', body: {}, idempotencyKey: null, headers: { 'Idempotency-Key': 'k1' } })
    expect(wire.idempotencyKey).toBeNull()
    expect(wire.headers).not.toHaveProperty('idempotency-key')
    expect(wire.headers).not.toHaveProperty('Idempotency-Key')
  })

  it('is the one given in the headers (any case) when the request names none', () => {
    const wire = prepareRequest(options, { method: 'POST', path: '/a', body: {}, headers: { 'IDEMPOTENCY-KEY': 'k2' } })
    expect(wire.idempotencyKey).toBe('k2')
    expect(wire.headers['idempotency-key']).toBe('k2')
  })
})
