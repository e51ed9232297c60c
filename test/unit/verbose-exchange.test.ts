import { describe, expect, it } from 'vitest'
import { formatExchange, maskAuthorization } from '../../src/cli/verbose-exchange.js'
import { SHOWN_BODY_CHARS as VERBOSE_BODY_CHARS } from '../../src/text/shown-body.js'
import type { ClientAnswer, PreparedRequest } from '../../src/client/request-types.js'

const wire: PreparedRequest = {
  url: 'http://127.0.0.1:4010/api/sandbox/loans/flow',
  headers: { accept: 'application/json', authorization: 'Bearer sk_sandbox_0123456789abcdef', 'idempotency-key': 'k-1', 'content-type': 'application/json' },
  text: '{"action":"confirm_btc","tx_hash":"abc"}',
  idempotencyKey: 'k-1',
}

function answer(status: number, text: string, headers: Record<string, string> = {}, attempts = 1): ClientAnswer {
  return { status, headers: new Headers(headers), body: undefined, text, requestId: null, errorCode: null, idempotencyKey: 'k-1', attempts, durationMs: 3 }
}

describe('sandbox run --verbose', () => {
  it('prints what was sent and every header and the body of the answer, curl -v style, with the key masked', () => {
    expect(formatExchange('POST', wire, answer(409, '{"error_code":"FLOW_CONFLICT"}', { 'x-request-id': 'req_1', 'ratelimit-remaining': '118' }, 2))).toEqual([
      '> POST http://127.0.0.1:4010/api/sandbox/loans/flow',
      '> accept: application/json',
      '> authorization: Bearer sk_sandbox_0123…cdef',
      '> idempotency-key: k-1',
      '> content-type: application/json',
      '> {"action":"confirm_btc","tx_hash":"abc"}',
      '< 409 (attempt 2)',
      '< ratelimit-remaining: 118',
      '< x-request-id: req_1',
      '< {"error_code":"FLOW_CONFLICT"}',
    ])
  })

  it('says why an attempt got no answer', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4010'), { code: 'ECONNREFUSED' }) })
    expect(formatExchange('GET', { ...wire, text: undefined }, refused).at(-1)).toBe('< no answer: ECONNREFUSED')
  })

  it('cuts a long body, and escapes control characters a server or scenario put in headers and bodies', () => {
    const long = 'x'.repeat(VERBOSE_BODY_CHARS + 25)
    const lines = formatExchange('GET', { ...wire, text: undefined }, answer(200, long, { 'x-note': 'a\u001b[2Jb' }))
    expect(lines.at(-1)).toBe(`< ${'x'.repeat(VERBOSE_BODY_CHARS)}... (25 more characters)`)
    expect(lines).toContain('< x-note: a\\u001b[2Jb')
    expect(formatExchange('POST', { ...wire, text: '{"a":"\u0007"}' }, answer(200, ''))[5]).toBe('> {"a":"\\u0007"}')
  })

  it.each([
    ['Bearer sk_sandbox_0123456789abcdef', 'Bearer sk_sandbox_0123…cdef'],
    ['Bearer sk_sandbox_short', 'Bearer sk_sandbox_*****'],
    ['Bearer sk_live_0123456789abcdef', '****'],
    ['Basic dXNlcjpwYXNz', '****'],
  ])('masks %j as %j', (value, masked) => {
    expect(maskAuthorization(value)).toBe(masked)
  })
})

describe('sandbox run --verbose, a drop_answer step', () => {
  it('says the body was not read rather than showing an empty one', () => {
    expect(formatExchange('POST', wire, { ...answer(200, '', { 'x-request-id': 'req_2' }), bodyUnread: true }).slice(-2)).toEqual([
      '< x-request-id: req_2',
      '< (body not read: the step closes the connection after the status line)',
    ])
  })
})
