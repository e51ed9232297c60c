import { describe, expect, it } from 'vitest'
import { createSandboxClient, SandboxRequestError } from '../../src/client/index.js'

// A key read from a file (readFileSync keeps its trailing newline, a CRLF file its \r) failed every
// call with a SandboxRequestError that printed the whole key into the partner's logs; a key given
// with its "Bearer " got the server's 401 asking for "Authorization: Bearer sk_sandbox_...", which
// the partner had sent. The CLI refused both at once (src/cli/api-target.ts); the library did not.

const KEY = 'sk_sandbox_partner_secret_key_0001'
const baseUrl = 'http://127.0.0.1:1'

describe('createSandboxClient checks apiKey at once', () => {
  it('refuses a key with a line break or another character a header cannot carry, without printing it', () => {
    const cases: Array<[string, string]> = [
      [`${KEY}\n`, 'apiKey ends with a line break (U+000A), which an HTTP header cannot carry, so no request could be sent: trim it (a key read from a file keeps its last line break; one saved with CRLF line ends its \\r too)'],
      [`${KEY}\r\n`, 'apiKey ends with a carriage return (U+000D), which an HTTP header cannot carry, so no request could be sent: trim it (a key read from a file keeps its last line break; one saved with CRLF line ends its \\r too)'],
      [`${KEY.slice(0, 20)}€${KEY.slice(20)}`, 'apiKey holds U+20AC, which an HTTP header cannot carry, so no request could be sent: give the key as the server issued it (sk_sandbox_ and letters, digits or _)'],
    ]
    for (const [apiKey, message] of cases) {
      expect(() => createSandboxClient({ baseUrl, apiKey }), JSON.stringify(apiKey)).toThrow(new TypeError(message))
    }
  })

  it('refuses a key given with its "Bearer "', () => {
    expect(() => createSandboxClient({ baseUrl, apiKey: `Bearer ${KEY}` })).toThrow(new TypeError('apiKey starts with "Bearer ": give the key alone; the client sends "Authorization: Bearer KEY" itself'))
  })

  it('takes a key as the server issued it, none, or an empty one (a CI secret not set)', () => {
    for (const apiKey of [KEY, undefined, null, '']) expect(() => createSandboxClient({ baseUrl, apiKey })).not.toThrow()
  })

  it('a per-request key a header cannot carry is refused without printing it', async () => {
    const client = createSandboxClient({ baseUrl })
    const error = await client.request({ method: 'GET', path: '/api/sandbox/state', apiKey: `${KEY}\n` }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SandboxRequestError)
    expect((error as Error).message).toBe('the authorization header cannot carry its value (the API key, not shown): U+000A is not a character an HTTP header can hold (Latin-1 text without control characters)')
  })
})
