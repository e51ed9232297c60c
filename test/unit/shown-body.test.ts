import { describe, expect, it } from 'vitest'
import { clipBody, maskSecrets, SHOWN_BODY_CHARS } from '../../src/text/shown-body.js'

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

  it('cuts a long body, saying how much was left out', () => {
    expect(clipBody('x'.repeat(SHOWN_BODY_CHARS))).toBe('x'.repeat(SHOWN_BODY_CHARS))
    expect(clipBody('x'.repeat(SHOWN_BODY_CHARS + 7))).toBe(`${'x'.repeat(SHOWN_BODY_CHARS)}... (7 more characters)`)
  })
})
