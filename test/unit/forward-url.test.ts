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

  it('says what is wrong with a secret long enough: a line break or space around it, or a preview', () => {
    const rule = 'must be whsec_ and at least 16 printable characters without spaces (sandbox webhook sign and the receivers use it whole)'
    // A CI secret or a Kubernetes secret saved with echo keeps its final newline: "got whsec_ and 23 characters" left the reader counting.
    expect(() => parseForwardSecret('whsec_0123456789abcdef\n', 'SANDBOX_WEBHOOK_FORWARD_SECRET')).toThrow(`SANDBOX_WEBHOOK_FORWARD_SECRET ${rule}, got whsec_ and 16 characters with a line break or space around them (a secret saved with its final newline?): remove it, from the receiver's copy too`)
    expect(() => parseForwardSecret(' whsec_0123456789abcdef')).toThrow(`--webhook-forward-secret ${rule}, got whsec_ and 16 characters with a line break or space around them (a secret saved with its final newline?): remove it, from the receiver's copy too`)
    expect(() => parseForwardSecret('whsec_...cdef')).toThrow(`--webhook-forward-secret ${rule}, got a secret's preview (whsec_... and its last 4 characters, as serve's start line shows a secret it was given), not the secret: give the whole secret your receiver verifies with`)
  })
})
