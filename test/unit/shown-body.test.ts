import { describe, expect, it } from 'vitest'
import { clipBody, maskSecrets, showBody, SHOWN_BODY_CHARS } from '../../src/text/shown-body.js'

describe('bodies as logs show them', () => {
  it('masks webhook signing secrets to their last 4 characters, wherever they sit in the JSON', () => {
    const answer = '{"endpoint":{"id":"we_1","signingSecret":"whsec_0123456789abcdefXYZW","secretPreview":"whsec_…XYZW"},"secret": "plain-secret-value-1234"}'
    expect(maskSecrets(answer)).toBe('{"endpoint":{"id":"we_1","signingSecret":"whsec_****XYZW","secretPreview":"whsec_…XYZW"},"secret": "****1234"}')
    expect(maskSecrets('{"signingSecret":"whsec_short"}')).toBe('{"signingSecret":"whsec_****"}')
    expect(maskSecrets('{"note":"no secret here"}')).toBe('{"note":"no secret here"}')
  })

  // PHP's json_encode writes / as \/ by default, and a base64 secret has slashes: such a secret
  // (or one with any escape) was shown whole in serve --log-bodies.
  it('masks a secret written with JSON escapes, showing its last 4 characters as written', () => {
    expect(maskSecrets('{"secret":"whsec_ab\\/cdefghijklmnop","x":1}')).toBe('{"secret":"whsec_****mnop","x":1}')
    expect(maskSecrets('{"secret":"whsec_abcdefghijklm\\u006e\\/p"}')).toBe('{"secret":"whsec_****mn/p"}')
    expect(maskSecrets('{"secret":"whsec_abcdefghij\\"kl\\\\"}')).toBe('{"secret":"whsec_****\\"kl\\\\"}')
  })

  // A receiver behind basic auth has its password in the URL a partner registers; the API refuses
  // it, but serve --log-bodies and --verbose printed the body it came in whole, into a CI log.
  it('masks the password of a URL in a body, and a user part alone (a token), as serve masks its forward URL', () => {
    expect(showBody('{"url":"https://hookuser:S3cretPassw0rd@example.com/hooks"}')).toBe('{"url":"https://hookuser:***@example.com/hooks"}')
    expect(showBody('{"url":"https://tok_0123456789@example.com/hooks","events":["sandbox.loan.issued"]}')).toBe('{"url":"https://***@example.com/hooks","events":["sandbox.loan.issued"]}')
    expect(showBody('{"url":"https://u:p\\"w\\/d@example.com/x"}')).toBe('{"url":"https://u:***@example.com/x"}')
    // An address or a URL without credentials is shown as it is.
    expect(showBody('{"email":"dev@acme.example","url":"https://example.com/a@b","note":"http://x and me@y"}')).toBe('{"email":"dev@acme.example","url":"https://example.com/a@b","note":"http://x and me@y"}')
  })

  it('cuts a long body, saying how much was left out', () => {
    expect(clipBody('x'.repeat(SHOWN_BODY_CHARS))).toBe('x'.repeat(SHOWN_BODY_CHARS))
    expect(clipBody('x'.repeat(SHOWN_BODY_CHARS + 7))).toBe(`${'x'.repeat(SHOWN_BODY_CHARS)}... (7 more characters)`)
  })
})
