import { describe, expect, it } from 'vitest'
import { parseForwardSecret, parseForwardUrl } from '../../src/webhooks/forward-url.js'

describe('--webhook-forward-to', () => {
  it('takes an http or https URL, normalized as deliveries and serve show it, and refuses another scheme', () => {
    expect(parseForwardUrl('https://Receiver.Example:8443/hooks')).toBe('https://receiver.example:8443/hooks')
    expect(parseForwardUrl('http://localhost:3000')).toBe('http://localhost:3000/')
    expect(() => parseForwardUrl('ftp://localhost/hooks')).toThrow('--webhook-forward-to must be an http(s) URL, not ftp:')
    // The receiver's own "--port 0" copied over: no delivery could ever connect.
    expect(() => parseForwardUrl('http://127.0.0.1:0/hooks')).toThrow('--webhook-forward-to needs the port your receiver listens on; port 0 cannot be connected to (got "http://127.0.0.1:0/hooks")')
    expect(() => parseForwardUrl('http://127.0.0.1:000/hooks')).toThrow('port 0 cannot be connected to')
  })
})

describe('--webhook-forward-secret', () => {
  it('takes whsec_ and 16 or more printable characters, and refuses fewer or a space', () => {
    expect(parseForwardSecret('whsec_0123456789abcdef')).toBe('whsec_0123456789abcdef')
    expect(() => parseForwardSecret('whsec_0123456789abcde')).toThrow(/, got whsec_ and 15 characters$/)
    expect(() => parseForwardSecret('whsec_01234567 89abcdef')).toThrow(/^--webhook-forward-secret must be whsec_ and at least 16 printable characters without spaces/)
  })
})
