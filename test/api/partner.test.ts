import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, issueLoan, type TestApi } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

let api: TestApi
let receiver: TestReceiver | undefined
afterEach(async () => {
  await api?.sandbox.close()
  await receiver?.close()
  receiver = undefined
})

describe('partner profile API', () => {
  it('answers the default profile, then creates and updates it, emitting sandbox.partner.updated', async () => {
    receiver = await startReceiver()
    api = await createTestApi({ allowLocalWebhooks: true })
    await api.post('/api/sandbox/webhooks', { url: receiver.url, events: ['sandbox.partner.updated'] })
    const initial = await api.get('/api/sandbox/partner')
    expect(initial.status).toBe(200)
    expect(Object.keys(initial.body).sort()).toEqual(['levels', 'links', 'profile', 'request_id', 'rewards'])
    expect(initial.body.profile.name).toBe('Sandbox Partner')

    const nameless = await api.post('/api/sandbox/partner', { email: 'ops@acme.example' })
    expect(nameless.status).toBe(400)
    expect(nameless.body.error_code).toBe('INVALID_REQUEST')
    const badEmail = await api.post('/api/sandbox/partner', { name: 'Acme', email: 'not-an-email' })
    expect(badEmail.body).toMatchObject({ error_code: 'INVALID_REQUEST', error: 'email must be an email address (name@example.com).', details: { field: 'email', issue: 'must be an email address (name@example.com)' } })
    // A URL that is not http(s) says so, rather than zod's "Invalid URL" for a valid ftp:// one.
    for (const website of ['ftp://acme.example', 'acme.example']) {
      const badSite = await api.post('/api/sandbox/partner', { name: 'Acme', website })
      expect(badSite.body, website).toMatchObject({ error_code: 'INVALID_REQUEST', error: 'website must be an http:// or https:// URL.' })
    }

    const created = await api.post('/api/sandbox/partner', { name: 'Acme Lending', email: 'ops@acme.example' })
    expect(created.status).toBe(200)
    expect(created.body.profile).toMatchObject({ name: 'Acme Lending', email: 'ops@acme.example' })
    const updated = await api.post('/api/sandbox/partner', { website: 'https://acme.example' })
    expect(updated.body.profile).toMatchObject({ name: 'Acme Lending', website: 'https://acme.example' })

    const events = await receiver.waitFor(2)
    expect(events.map((item) => JSON.parse(item.body).data.object.name)).toEqual(['Acme Lending', 'Acme Lending'])
    expect(events.every((item) => item.headers['x-service-webhook-event'] === 'sandbox.partner.updated')).toBe(true)
  })

  it('accrues rewards and groups deals from issued loans, the same in GET partner and GET state', async () => {
    api = await createTestApi()
    await issueLoan(api, api.key, { collateral_btc: 0.5, loan_amount: 20000, external_client_id: 'client-7' })
    await api.post('/api/sandbox/loans', { collateral_btc: 0.2, loan_amount: 5000, client_reference: 'ref-1' })
    const partner = await api.get('/api/sandbox/partner')
    expect(partner.body.rewards.accrued_usd).toBe(25)
    expect(partner.body.rewards.entries.map((entry: { amount_usd: number }) => entry.amount_usd)).toEqual([20, 5])
    expect(partner.body.levels.volume_usd).toBe(25000)
    expect(partner.body.levels.current.level).toBe('bronze')
    expect(partner.body.links[0].deals.map((deal: { external_client_id: string | null; client_reference: string | null }) => [deal.external_client_id, deal.client_reference])).toEqual([['client-7', null], [null, 'ref-1']])
    const state = await api.get('/api/sandbox/state')
    const { request_id: _id, ...block } = partner.body
    expect(state.body.partner).toEqual(block)
  })
})
