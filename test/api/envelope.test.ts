import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

describe('envelope', () => {
  it('puts the same request_id in the body and the x-request-id header of every answer', async () => {
    api = await createTestApi()
    const answers = [
      await api.get('/api/sandbox/config'),
      await api.call('GET', '/api/sandbox/config', { key: null }),
      await api.get('/api/sandbox/nope'),
      await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }),
    ]
    const ids = new Set<string>()
    for (const answer of answers) {
      expect(answer.body.request_id).toMatch(/^req_[0-9a-f]{20}$/)
      expect(answer.headers.get('x-request-id')).toBe(answer.body.request_id)
      expect(answer.headers.get('content-type')).toContain('application/json')
      ids.add(answer.body.request_id)
    }
    expect(ids.size).toBe(answers.length)
  })

  it('reads a body as JSON whatever its Content-Type says, as the README documents', async () => {
    api = await createTestApi()
    const body = { name: 'Acme Lending' }
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const answer = await api.post('/api/sandbox/partner', undefined, { rawBody: JSON.stringify(body), headers: { 'content-type': type } })
      expect(answer.status, type).toBe(200)
      expect(answer.body.profile.name, type).toBe('Acme Lending')
    }
    expect((await api.post('/api/sandbox/partner', undefined, { rawBody: 'name=Acme', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).body.error_code).toBe('INVALID_JSON')
  })

  it('answers GET config with the decided shape and the fixture values', async () => {
    api = await createTestApi()
    const { status, body } = await api.get('/api/sandbox/config')
    expect(status).toBe(200)
    expect(body.rates.btc_usd).toBe(95000)
    expect(body.rates.btc_rub).toEqual({ market: expect.any(Number), payout: expect.any(Number), loan: expect.any(Number) })
    expect(body.borrow_rates.fixed).toBe(12)
    expect(body.risk).toEqual({ max_ltv_percent: 50, liquidation_ltv_percent: 80, liquidation_penalty_percent: 5 })
    expect(body.fees.loan_origination_percent).toBe(1)
    expect(body.limits.loan_amount.min).toBeGreaterThan(0)
    expect(body.currencies).toEqual(['USDT'])
    expect(body.api_version).toBe('0.3.0')
    expect(body).not.toHaveProperty('idempotency_replayed')
    const again = await api.get('/api/sandbox/config')
    expect(again.body.request_id).not.toBe(body.request_id)
    expect({ ...again.body, request_id: 'same' }).toEqual({ ...body, request_id: 'same' })
  })

  it('applies config overrides deep-merged over the fixtures', async () => {
    api = await createTestApi({ config: { rates: { btc_usd: 60000 }, risk: { max_ltv_percent: 40 } } })
    const { body } = await api.get('/api/sandbox/config')
    expect(body.rates.btc_usd).toBe(60000)
    expect(body.rates.usd_rub.market).toBe(90)
    expect(body.risk.max_ltv_percent).toBe(40)
    expect(body.risk.liquidation_ltv_percent).toBe(80)
    // A key the config does not have is a typo, not a setting to ignore.
    await expect(createTestApi({ config: { rates: { btc_usdt: 1 } } as never })).rejects.toThrow('config overrides is not a valid sandbox config: unknown key rates.btc_usdt')
  })

  it('answers unknown paths 404 NOT_FOUND and wrong methods 405 with Allow', async () => {
    api = await createTestApi()
    const missing = await api.get('/api/sandbox/loans/abc')
    expect(missing.status).toBe(404)
    expect(missing.body.error_code).toBe('NOT_FOUND')
    expect(missing.body.error).toEqual(expect.any(String))
    const outside = await api.get('/')
    expect(outside.status).toBe(404)
    expect(outside.body.error_code).toBe('NOT_FOUND')
    // A trailing slash is another path: no loan is made, and the answer names the path meant.
    const slashed = await api.post('/api/sandbox/loans/', { collateral_btc: 0.1, loan_amount: 1000 })
    expect([slashed.status, slashed.body.error_code]).toEqual([404, 'NOT_FOUND'])
    expect(slashed.body.error).toContain('(/api/sandbox/loans)')
    expect((await api.get('/api/sandbox/loans')).body.activeLoans).toEqual([])
    expect((await api.get('/api/sandbox/config/')).status).toBe(404)
    expect((await api.get('/api/sandbox/openapi.json/')).status).toBe(404)
    expect((await api.post('/api/sandbox/loans/ln_1/action/', { action: 'run_kyt' })).body.error).toContain('(/api/sandbox/loans/ln_1/action)')
    // A path that does not exist without the slash either is not suggested.
    expect((await api.get('/foo/')).body.error).toBe('No such endpoint; the API lives under /api/sandbox/.')
    expect((await api.get('/api/sandbox/bogus/')).body.error).toBe('No such endpoint.')
    expect((await api.get('/api/sandbox/')).body.error).toBe('No such endpoint.')

    const wrong = await api.call('DELETE', '/api/sandbox/config')
    expect(wrong.status).toBe(405)
    expect(wrong.body.error_code).toBe('METHOD_NOT_ALLOWED')
    expect(wrong.headers.get('allow')).toBe('GET')
    const flowGet = await api.get('/api/sandbox/loans/flow')
    expect(flowGet.status).toBe(405)
    expect(flowGet.headers.get('allow')).toBe('POST')
    // The message names the path asked for, not the router's pattern for it (`:id`).
    const actionGet = await api.get('/api/sandbox/loans/loan_1/repayment-flow')
    expect([actionGet.status, actionGet.headers.get('allow')]).toEqual([405, 'POST'])
    expect(actionGet.body.error).toBe('GET is not allowed on /api/sandbox/loans/loan_1/repayment-flow; use POST.')
    const loans = await api.call('PUT', '/api/sandbox/loans')
    expect(loans.headers.get('allow')).toBe('GET, POST')
    const docPost = await api.call('POST', '/api/sandbox/openapi.json')
    expect([docPost.status, docPost.body.error_code, docPost.headers.get('allow')]).toEqual([405, 'METHOD_NOT_ALLOWED', 'GET'])
  })

  it('refuses bodies above 1 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
    api = await createTestApi()
    const big = JSON.stringify({ action: 'start_collateral_transfer', pad: 'x'.repeat(1024 * 1024) })
    const answer = await api.call('POST', '/api/sandbox/loans/flow', { rawBody: big })
    expect(answer.status).toBe(413)
    expect(answer.body.error_code).toBe('PAYLOAD_TOO_LARGE')
  })

  it('answers a body that is not JSON with 400 INVALID_JSON, and a non-object with INVALID_REQUEST', async () => {
    api = await createTestApi()
    const broken = await api.call('POST', '/api/sandbox/loans/flow', { rawBody: '{"action":' })
    expect(broken.status).toBe(400)
    expect(broken.body.error_code).toBe('INVALID_JSON')
    const list = await api.call('POST', '/api/sandbox/loans', { rawBody: '[1,2]' })
    expect(list.status).toBe(400)
    expect(list.body.error_code).toBe('INVALID_REQUEST')
    expect(list.body.details).toBeDefined()
  })

  it('answers a body nested past 64 levels with 400 INVALID_REQUEST, not a 500, and takes one at 64', async () => {
    api = await createTestApi()
    const arrays = await api.call('POST', '/api/sandbox/loans', { rawBody: `${'['.repeat(100_000)}${']'.repeat(100_000)}` })
    expect([arrays.status, arrays.body.error_code, arrays.body.details]).toEqual([400, 'INVALID_REQUEST', { field: 'body', issue: 'nested deeper than 64 levels' }])
    const objects = await api.call('POST', '/api/sandbox/partner', { rawBody: `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}` })
    expect([objects.status, objects.body.error_code]).toEqual([400, 'INVALID_REQUEST'])
    // Brackets inside strings are text, not nesting.
    const quoted = await api.call('POST', '/api/sandbox/partner', { rawBody: JSON.stringify({ name: `x${'[{'.repeat(1000)}\\"` }) })
    expect([quoted.status, quoted.body.error_code, quoted.body.details?.field]).toEqual([400, 'INVALID_REQUEST', 'name'])
    const deepest = `{"name":"ok","pad":${'['.repeat(63)}${']'.repeat(63)}}`
    expect((await api.call('POST', '/api/sandbox/partner', { rawBody: deepest })).status).toBe(200)
  })

  it('answers a JSON null body with INVALID_REQUEST on every POST, and takes no body as an empty one', async () => {
    api = await createTestApi()
    const paths = ['/api/sandbox/loans/flow', '/api/sandbox/loans', '/api/sandbox/loans/loan_x/action', '/api/sandbox/loans/loan_x/repayment-flow', '/api/sandbox/partner', '/api/sandbox/webhooks', '/api/sandbox/webhooks/retry']
    for (const path of paths) {
      const nulled = await api.call('POST', path, { rawBody: 'null' })
      expect([path, nulled.status, nulled.body.error_code, nulled.body.details]).toEqual([path, 400, 'INVALID_REQUEST', { field: 'body', issue: 'must be a JSON object' }])
    }
    const empty = await api.call('POST', '/api/sandbox/loans/flow', { rawBody: '' })
    expect([empty.status, empty.body.error_code]).toEqual([400, 'INVALID_ACTION'])
  })

  // Every answer here is checked against the OpenAPI document (test/helpers/api.ts): these codes
  // were answered but missing from the test event's and DELETE's responses there.
  it('answers the webhook test event and DELETE /webhooks with the body and Idempotency-Key errors every write has', async () => {
    api = await createTestApi()
    const test = '/api/sandbox/webhooks/test'
    const notObject = await api.call('POST', test, { rawBody: '[1]' })
    expect([notObject.status, notObject.body.error_code, notObject.body.details]).toEqual([400, 'INVALID_REQUEST', { field: 'body', issue: 'must be a JSON object' }])
    const badKey = await api.call('POST', test, { idempotencyKey: 'x'.repeat(256) })
    expect([badKey.status, badKey.body.error_code, badKey.body.details?.field]).toEqual([400, 'INVALID_REQUEST', 'Idempotency-Key'])
    const broken = await api.call('DELETE', '/api/sandbox/webhooks', { rawBody: '{"a":' })
    expect([broken.status, broken.body.error_code]).toEqual([400, 'INVALID_JSON'])
    const deep = await api.call('DELETE', '/api/sandbox/webhooks', { rawBody: `${'['.repeat(100)}${']'.repeat(100)}` })
    expect([deep.status, deep.body.error_code]).toEqual([400, 'INVALID_REQUEST'])
    const big = await api.call('DELETE', '/api/sandbox/webhooks', { rawBody: JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }) })
    expect([big.status, big.body.error_code]).toEqual([413, 'PAYLOAD_TOO_LARGE'])
  })

  it('refuses a DELETE /webhooks body that is JSON but not an object, as every write does, and leaves the endpoint enabled', async () => {
    api = await createTestApi({ resolveHost: async () => ['93.184.216.34'] })
    expect((await api.post('/api/sandbox/webhooks', { url: 'https://hooks.partner.example/sandbox' })).status).toBe(200)
    for (const rawBody of ['[1]', 'null', '"off"']) {
      const odd = await api.call('DELETE', '/api/sandbox/webhooks', { rawBody })
      expect([rawBody, odd.status, odd.body.error_code, odd.body.details]).toEqual([rawBody, 400, 'INVALID_REQUEST', { field: 'body', issue: 'must be a JSON object' }])
    }
    expect((await api.get('/api/sandbox/webhooks')).body.endpoint.enabled).toBe(true)
    // No body, or an object, disables it as before.
    const disabled = await api.call('DELETE', '/api/sandbox/webhooks')
    expect([disabled.status, disabled.body.endpoint.enabled]).toEqual([200, false])
  })
})

describe('authentication (open mode)', () => {
  it('answers 401 SANDBOX_API_KEY_REQUIRED without a bearer token', async () => {
    api = await createTestApi()
    for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer' }] as Array<Record<string, string>>) {
      const answer = await api.call('GET', '/api/sandbox/loans', { key: null, headers })
      expect(answer.status).toBe(401)
      expect(answer.body.error_code).toBe('SANDBOX_API_KEY_REQUIRED')
    }
  })

  it('answers 401 SANDBOX_API_KEY_INVALID for a malformed key', async () => {
    api = await createTestApi()
    for (const key of ['sk_live_abcdefghijklmnopqrstuvwxyz', 'sk_sandbox_short', 'sk_sandbox_has-dash-abcdefghijklmnop']) {
      const answer = await api.call('GET', '/api/sandbox/loans', { key })
      expect(answer.status, key).toBe(401)
      expect(answer.body.error_code).toBe('SANDBOX_API_KEY_INVALID')
    }
  })

  it('authenticates before validating a POST', async () => {
    api = await createTestApi()
    const answer = await api.call('POST', '/api/sandbox/loans/flow', { key: null, idempotencyKey: null, rawBody: '{' })
    expect(answer.status).toBe(401)
  })
})
