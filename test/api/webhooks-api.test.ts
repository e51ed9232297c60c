import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

// Names resolve through this table only: no test here talks to DNS or sends a delivery.
const PUBLIC = ['93.184.216.34']
const resolveHost = async (host: string) => {
  if (host.endsWith('partner.example')) return PUBLIC
  if (host === 'internal.partner.test') return ['10.1.2.3']
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
}
const URL_A = 'https://hooks.partner.example/sandbox'

describe('webhook endpoint API', () => {
  it('creates the endpoint and shows the signing secret only on create and rotation', async () => {
    api = await createTestApi({ resolveHost })
    const created = await api.post('/api/sandbox/webhooks', { url: URL_A })
    expect(created.status).toBe(200)
    const endpoint = created.body.endpoint
    expect(endpoint).toMatchObject({ url: URL_A, enabled: true })
    expect(endpoint.id).toMatch(/^we_/)
    expect(endpoint.events).toHaveLength(8)
    expect(endpoint.signingSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(endpoint.secretPreview).toBe(`whsec_...${endpoint.signingSecret.slice(-4)}`)
    expect(created.body.deliveries).toEqual([])

    const updated = await api.post('/api/sandbox/webhooks', { url: 'https://other.partner.example/x', events: ['sandbox.loan.issued'] })
    expect(updated.body.endpoint).not.toHaveProperty('signingSecret')
    expect(updated.body.endpoint).toMatchObject({ id: endpoint.id, secretPreview: endpoint.secretPreview, events: ['sandbox.loan.issued'] })

    const read = await api.get('/api/sandbox/webhooks')
    expect(read.body.endpoint).not.toHaveProperty('signingSecret')
    expect(JSON.stringify(read.body)).not.toContain(endpoint.signingSecret)

    const rotated = await api.post('/api/sandbox/webhooks', { url: URL_A, rotate_secret: true })
    expect(rotated.body.endpoint.signingSecret).toMatch(/^whsec_/)
    expect(rotated.body.endpoint.signingSecret).not.toBe(endpoint.signingSecret)
  })

  it('answers GET with a null endpoint before one exists', async () => {
    api = await createTestApi({ resolveHost })
    const read = await api.get('/api/sandbox/webhooks')
    expect(read.status).toBe(200)
    expect(read.body).toMatchObject({ endpoint: null, deliveries: [] })
  })

  it('validates the URL and the events list with the spec codes', async () => {
    api = await createTestApi({ resolveHost })
    const cases: Array<[unknown, string, number]> = [
      [{}, 'WEBHOOK_URL_REQUIRED', 400],
      [{ url: '' }, 'WEBHOOK_URL_REQUIRED', 400],
      [{ url: 'http://hooks.partner.example/x' }, 'WEBHOOK_URL_INVALID', 400],
      [{ url: 'https://user:pw@hooks.partner.example/x' }, 'WEBHOOK_URL_INVALID', 400],
      [{ url: 'https://localhost/x' }, 'WEBHOOK_URL_INVALID', 400],
      [{ url: 'https://127.0.0.1/x' }, 'WEBHOOK_URL_INVALID', 400],
      [{ url: 'https://internal.partner.test/x' }, 'WEBHOOK_URL_INVALID', 400],
      [{ url: 'https://nowhere.invalid/x' }, 'WEBHOOK_URL_INVALID', 400],
      [{ url: URL_A, events: [] }, 'WEBHOOK_EVENTS_INVALID', 400],
      [{ url: URL_A, events: ['sandbox.loan.issued', 'sandbox.nope'] }, 'WEBHOOK_EVENTS_INVALID', 400],
      [{ url: URL_A, events: 'sandbox.loan.issued' }, 'WEBHOOK_EVENTS_INVALID', 400],
    ]
    for (const [body, code, status] of cases) {
      const answer = await api.post('/api/sandbox/webhooks', body)
      expect([answer.status, answer.body.error_code], JSON.stringify(body)).toEqual([status, code])
    }
    expect((await api.get('/api/sandbox/webhooks')).body.endpoint).toBeNull()
    // An unknown type names the one it most likely meant; a short name the full one.
    const typos = await api.post('/api/sandbox/webhooks', { url: URL_A, events: ['sandbox.loan.isued', 'loan.updated', 'sandbox.nope'] })
    expect(typos.body.error).toBe('Unknown event types: sandbox.loan.isued (did you mean sandbox.loan.issued?), loan.updated (did you mean sandbox.loan.updated?), sandbox.nope.')
    expect(typos.body.details.unknown_events).toEqual(['sandbox.loan.isued', 'loan.updated', 'sandbox.nope'])
    // An empty list of ids: told as a list, not as a number.
    const noIds = await api.post('/api/sandbox/webhooks/retry', { delivery_ids: [] })
    expect(noIds.body).toMatchObject({ error_code: 'INVALID_REQUEST', error: 'delivery_ids must not be empty.' })
  })

  it('accepts http and local URLs with allowLocalWebhooks', async () => {
    api = await createTestApi({ allowLocalWebhooks: true, resolveHost })
    const answer = await api.post('/api/sandbox/webhooks', { url: 'http://localhost:3000/webhooks' })
    expect(answer.status).toBe(200)
    expect(answer.body.endpoint.url).toBe('http://localhost:3000/webhooks')
    expect((await api.post('/api/sandbox/webhooks', { url: 'http://user:pw@localhost:3000/' })).body.error_code).toBe('WEBHOOK_URL_INVALID')
  })

  it('requires an endpoint for the test event and for DELETE, and a known delivery to retry', async () => {
    api = await createTestApi({ resolveHost })
    const test = await api.post('/api/sandbox/webhooks/test')
    expect(test.status).toBe(409)
    expect(test.body.error_code).toBe('WEBHOOK_ENDPOINT_REQUIRED')
    const deleted = await api.call('DELETE', '/api/sandbox/webhooks', { idempotencyKey: null })
    expect(deleted.status).toBe(409)
    expect(deleted.body.error_code).toBe('WEBHOOK_ENDPOINT_REQUIRED')
    for (const body of [{ delivery_id: 'whd_unknown' }, { delivery_ids: ['whd_a', 'whd_b'] }]) {
      const answer = await api.post('/api/sandbox/webhooks/retry', body)
      expect(answer.status).toBe(404)
      expect(answer.body.error_code).toBe('WEBHOOK_DELIVERY_NOT_FOUND')
    }
    const none = await api.post('/api/sandbox/webhooks/retry', {})
    expect(none.status).toBe(200)
    expect(none.body.retried).toEqual([])
    const tooMany = await api.post('/api/sandbox/webhooks/retry', { delivery_ids: Array.from({ length: 51 }, (_, i) => `whd_${i}`) })
    expect([tooMany.status, tooMany.body.error]).toEqual([400, 'delivery_ids must have at most 50 items.'])
    const fiftyOne = await api.post('/api/sandbox/webhooks/retry', { delivery_id: 'whd_x', delivery_ids: Array.from({ length: 50 }, (_, i) => `whd_${i}`) })
    expect([fiftyOne.status, fiftyOne.body.error_code, fiftyOne.body.details.field]).toEqual([400, 'INVALID_REQUEST', 'delivery_ids'])
  })

  it('is idempotent: a replayed create returns the same secret and creates nothing new', async () => {
    api = await createTestApi({ resolveHost })
    const first = await api.post('/api/sandbox/webhooks', { url: URL_A }, { idempotencyKey: 'wh-1' })
    const replay = await api.post('/api/sandbox/webhooks', { url: URL_A }, { idempotencyKey: 'wh-1' })
    expect(replay.body.idempotency_replayed).toBe(true)
    expect(replay.body.endpoint.signingSecret).toBe(first.body.endpoint.signingSecret)
  })
})
