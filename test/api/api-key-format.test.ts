import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi | undefined
afterEach(async () => api?.sandbox.close())

describe('the API key rule (open mode)', () => {
  it('takes sk_sandbox_ with exactly 16 characters after it, and refuses 15', async () => {
    api = await createTestApi()
    const sixteen = await api.call('GET', '/api/sandbox/loans', { key: `sk_sandbox_${'a'.repeat(16)}` })
    expect(sixteen.status).toBe(200)
    const fifteen = await api.call('GET', '/api/sandbox/loans', { key: `sk_sandbox_${'a'.repeat(15)}` })
    expect([fifteen.status, fifteen.body.error_code]).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
  })

  it('reads the Bearer scheme in any case, as HTTP auth schemes are', async () => {
    api = await createTestApi()
    for (const scheme of ['bearer', 'BEARER']) {
      const answer = await api.call('GET', '/api/sandbox/loans', { key: null, headers: { authorization: `${scheme} ${api.key}` } })
      expect(answer.status, scheme).toBe(200)
    }
  })

  it('says the Authorization header came twice when a client sent it twice, rather than asking for it', async () => {
    // Two Authorization headers reach the server joined into one value, as HTTP joins repeated
    // fields: a client that adds the header on top of its library's default got "Send your
    // sandbox API key as Authorization: Bearer ...", which it had done, twice.
    api = await createTestApi()
    const headers = new Headers()
    headers.append('authorization', `Bearer ${api.key}`)
    headers.append('authorization', `Bearer ${api.key}`)
    const response = await api.sandbox.fetch(new Request('http://sandbox.test/api/sandbox/loans', { headers }))
    const body = await response.json()
    expect([response.status, body.error_code]).toEqual([401, 'SANDBOX_API_KEY_REQUIRED'])
    expect(body.error).toBe('The Authorization header came more than once (or held several values); send it once, as "Authorization: Bearer sk_sandbox_...".')
    const none = await api.call('GET', '/api/sandbox/loans', { key: null })
    expect(none.body.error).toBe('Send your sandbox API key as "Authorization: Bearer sk_sandbox_...".')
  })
})
