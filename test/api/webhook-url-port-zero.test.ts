import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

// Names resolve through this stub only: the test never uses real DNS.
const resolveHost = async () => ['93.184.216.34']

describe('webhook URL on port 0', () => {
  it('refuses a public https URL on port 0 with 400 WEBHOOK_URL_INVALID, and registers nothing', async () => {
    api = await createTestApi({ resolveHost })
    for (const url of ['https://hooks.partner.example:0/x', 'https://hooks.partner.example:000/x']) {
      const { status, body } = await api.post('/api/sandbox/webhooks', { url })
      expect(status).toBe(400)
      expect(body.error_code).toBe('WEBHOOK_URL_INVALID')
      expect(body.details).toEqual({ reason: 'port_zero' })
      expect(body.error).toContain('port 0')
    }
    expect((await api.get('/api/sandbox/webhooks')).body.endpoint).toBeNull()
  })

  it('refuses port 0 with --allow-local-webhooks too, and still takes a real port', async () => {
    api = await createTestApi({ allowLocalWebhooks: true })
    const refused = await api.post('/api/sandbox/webhooks', { url: 'http://127.0.0.1:0/hooks' })
    expect(refused.status).toBe(400)
    expect(refused.body.details).toEqual({ reason: 'port_zero' })
    const taken = await api.post('/api/sandbox/webhooks', { url: 'http://127.0.0.1:4242/hooks' })
    expect(taken.status).toBe(200)
    expect(taken.body.endpoint.url).toBe('http://127.0.0.1:4242/hooks')
  })
})
