import { validate } from '@readme/openapi-parser'
import { afterEach, describe, expect, it } from 'vitest'
import { ErrorCodes } from '../../src/errors/codes.js'
import { buildOpenApiDocument } from '../../src/openapi/build-document.js'
import { createLoanRoutes } from '../../src/server/routes/loan-routes.js'
import { createPartnerRoutes } from '../../src/server/routes/partner-routes.js'
import { createWebhookRoutes } from '../../src/server/routes/webhook-routes.js'
import { EVENT_TYPES } from '../../src/webhooks/types.js'
import { checkAnswerAgainstContract } from '../helpers/contract.js'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi | undefined
afterEach(async () => api?.sandbox.close())

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const doc = buildOpenApiDocument() as any

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    const result = await validate(structuredClone(doc))
    expect(result.valid ? [] : result.errors).toEqual([])
    expect(result.warnings).toEqual([])
    expect(doc.openapi).toBe('3.1.0')
  })

  it('describes every route the server registers, and nothing else', () => {
    const served = [...createLoanRoutes(), ...createWebhookRoutes(), ...createPartnerRoutes()]
      .map(([method, path]) => `${method} ${path.replace(/:id/, '{loanId}')}`).sort()
    const described = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`))
      .filter((entry) => entry !== 'GET /api/sandbox/openapi.json').sort()
    expect(described).toEqual(served)
  })

  it('lists every error code, per status, and the headers partners rely on', () => {
    const text = JSON.stringify(doc)
    for (const code of Object.keys(ErrorCodes)) expect(text, code).toContain(`"${code}"`)
    const flow = doc.paths['/api/sandbox/loans/flow'].post
    expect(flow.responses['409'].content['application/json'].schema.allOf[1].properties.error_code.enum)
      .toEqual(['IDEMPOTENCY_KEY_CONFLICT', 'IDEMPOTENCY_KEY_IN_PROGRESS', 'FLOW_CONFLICT'])
    expect(flow.responses['429'].headers['Retry-After']).toBeDefined()
    expect(flow.responses['200'].headers['x-request-id']).toBeDefined()
    expect(flow.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' })
    expect(doc.components.securitySchemes.sandboxKey).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.paths['/api/sandbox/loans'].get.parameters).toEqual([])
  })

  it('marks a request body optional where a POST may leave it out: the flow (spec 4.3), the webhook test and the retry of every failed delivery', () => {
    const required = Object.fromEntries(Object.entries(doc.paths).flatMap(([path, item]: [string, any]) => (item.post?.requestBody ? [[path, item.post.requestBody.required]] : [])))
    expect(required).toEqual({
      '/api/sandbox/loans': true,
      '/api/sandbox/loans/flow': false,
      '/api/sandbox/loans/{loanId}/action': true,
      '/api/sandbox/loans/{loanId}/repayment-flow': true,
      '/api/sandbox/partner': true,
      '/api/sandbox/webhooks': true,
      '/api/sandbox/webhooks/test': false,
      '/api/sandbox/webhooks/retry': false,
    })
  })

  it('describes every webhook event with its signature headers', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort())
    const names = doc.webhooks['sandbox.loan.issued'].post.parameters.map((p: { name: string }) => p.name)
    expect(names).toEqual(['x-service-webhook-id', 'x-service-webhook-event', 'x-service-webhook-timestamp', 'x-service-webhook-signature'])
  })

  it('is served at /api/sandbox/openapi.json with no key', async () => {
    api = await createTestApi()
    const answer = await api.call('GET', '/api/sandbox/openapi.json', { key: null })
    expect(answer.status).toBe(200)
    // The same document, naming the origin the request reached as its server.
    expect(answer.body).toEqual({ ...JSON.parse(JSON.stringify(doc)), servers: [{ url: 'http://sandbox.test', description: 'the sandbox that served this document' }] })
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
  })
})

describe('the contract check', () => {
  const headers = (id = 'req_abc') => new Headers({ 'x-request-id': id })
  const error = (code: string) => JSON.stringify({ request_id: 'req_abc', error_code: code, error: 'x' })

  it('accepts a real answer and fails wrong ones, naming what is wrong', async () => {
    api = await createTestApi()
    const real = await api.get('/api/sandbox/loans')
    const text = JSON.stringify(real.body)
    expect(checkAnswerAgainstContract('GET', '/api/sandbox/loans', 200, real.headers, text)).toEqual([])

    const { wallet: _wallet, ...withoutWallet } = real.body
    expect(checkAnswerAgainstContract('GET', '/api/sandbox/loans', 200, real.headers, JSON.stringify(withoutWallet))[0]).toMatch(/must have required property 'wallet'/)
    expect(checkAnswerAgainstContract('GET', '/api/sandbox/loans', 200, real.headers, JSON.stringify({ ...real.body, surprise: 1 }))[0]).toMatch(/additional properties/)
    expect(checkAnswerAgainstContract('GET', '/api/sandbox/loans', 200, real.headers, JSON.stringify({ ...real.body, draft: { id: 1 } }))[0]).toMatch(/draft/)
    expect(checkAnswerAgainstContract('GET', '/api/sandbox/loans', 418, real.headers, text)).toEqual(['GET /api/sandbox/loans → 418: status 418 is not declared for GET /api/sandbox/loans'])
    expect(checkAnswerAgainstContract('GET', '/api/sandbox/loans', 200, new Headers(), text)).toEqual(['GET /api/sandbox/loans → 200: x-request-id header missing'])
  })

  it('fails an error code the operation cannot answer with at that status', () => {
    expect(checkAnswerAgainstContract('POST', '/api/sandbox/loans/l_1/action', 409, headers(), error('FLOW_CONFLICT'))).toEqual([])
    expect(checkAnswerAgainstContract('POST', '/api/sandbox/loans/l_1/action', 409, headers(), error('WEBHOOK_ENDPOINT_REQUIRED'))[0]).toMatch(/error_code must be equal to one of the allowed values/)
    expect(checkAnswerAgainstContract('GET', '/api/sandbox/config', 409, headers(), error('FLOW_CONFLICT'))[0]).toMatch(/not declared/)
    expect(checkAnswerAgainstContract('POST', '/api/sandbox/loans', 429, headers(), error('SANDBOX_RATE_LIMIT_EXCEEDED'))).toEqual(['POST /api/sandbox/loans → 429: Retry-After missing'])
  })
})
