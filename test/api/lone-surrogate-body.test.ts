import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi | undefined
afterEach(async () => api?.sandbox.close())

// A partner name cut at 200 UTF-16 units inside an emoji: the JSON escape "\ud83d" alone.
const cutName = `Acme ${'🚀'}`.slice(0, -1)

describe('request bodies with half a character (a lone UTF-16 surrogate escape)', () => {
  it('refuses a partner name cut inside an emoji with 400 INVALID_JSON naming the field, and keeps the profile', async () => {
    api = await createTestApi()
    const answer = await api.post('/api/sandbox/partner', { name: cutName }, { idempotencyKey: 'cut-name-1' })
    expect(answer.status).toBe(400)
    expect(answer.body).toMatchObject({ error_code: 'INVALID_JSON', details: { field: 'name' } })
    expect(answer.body.error).toContain('name holds half of a character')
    expect((await api.get('/api/sandbox/partner')).body.profile.name).toBe('Sandbox Partner')

    // Not stored under its Idempotency-Key: the corrected retry with the same key is taken.
    const fixed = await api.post('/api/sandbox/partner', { name: 'Acme 🚀' }, { idempotencyKey: 'cut-name-1' })
    expect([fixed.status, fixed.body.profile.name]).toEqual([200, 'Acme 🚀'])
  })

  it('refuses one in a loan grouping field, nested values and field names, creating no loan', async () => {
    api = await createTestApi()
    const loan = await api.post('/api/sandbox/loans', { collateral_btc: 0.01, loan_amount: 100, external_client_id: 'client-\udc00' })
    expect([loan.status, loan.body.error_code, loan.body.details?.field]).toEqual([400, 'INVALID_JSON', 'external_client_id'])
    const nested = await api.post('/api/sandbox/webhooks', { url: 'https://partner.example/hooks', events: ['sandbox.loan.issued', 'x\ud800'] })
    expect([nested.status, nested.body.error_code, nested.body.details?.field]).toEqual([400, 'INVALID_JSON', 'events[1]'])
    const fieldName = await api.post('/api/sandbox/partner', { name: 'Acme', ['na\ud800me']: 'x' })
    expect([fieldName.status, fieldName.body.error_code, fieldName.body.details?.field]).toEqual([400, 'INVALID_JSON', 'body'])
    expect((await api.get('/api/sandbox/loans')).body.activeLoans).toEqual([])
  })
})
