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
})
