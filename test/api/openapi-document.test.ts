import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { afterEach, describe, expect, it } from 'vitest'
import { buildOpenApiDocument } from '../../src/openapi/build-document.js'
import { createTestApi, type TestApi } from '../helpers/api.js'

// What a partner's tools read from the document (generators, mock servers, linters such as
// `redocly lint` and `spectral lint`), beyond its validity, which contract.test.ts checks.

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
const BASE = 'https://sandbox.local/openapi.json'
const doc = buildOpenApiDocument() as Json
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
ajv.addSchema({ ...doc, $id: BASE })

let api: TestApi | undefined
afterEach(async () => api?.sandbox.close())

/** Every operation of the document, paths and webhooks, with where it is. */
function listOperations(): Array<{ where: string; operation: Json }> {
  return [...Object.entries(doc.paths as Json), ...Object.entries(doc.webhooks as Json)]
    .flatMap(([name, item]) => Object.entries(item as Json).map(([method, operation]) => ({ where: `${method.toUpperCase()} ${name}`, operation })))
}

describe('the OpenAPI document as partner tools read it', () => {
  it('names every operation, the webhooks included, once, with a summary and a description', () => {
    const operations = listOperations()
    expect(operations.filter(({ operation }) => !operation.operationId || !operation.summary || !operation.description).map(({ where }) => where)).toEqual([])
    const ids = operations.map(({ operation }) => operation.operationId)
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([])
    expect(doc.webhooks['sandbox.loan_application.updated'].post.operationId).toBe('onLoanApplicationUpdated')
  })

  it('asks for the sandbox key on every API call but the document itself, and for none on a webhook delivery', () => {
    const keyless = listOperations().filter(({ operation }) => (operation.security ?? doc.security).length === 0).map(({ where }) => where)
    expect(keyless.sort()).toEqual(['GET /api/sandbox/openapi.json', ...Object.keys(doc.webhooks).map((type) => `POST ${type}`)].sort())
  })

  it('describes the webhook endpoint body as the server takes it: a url on every call, a non-empty list of known events', async () => {
    const documented = ajv.getSchema(`${BASE}#/components/schemas/WebhookEndpointRequest`)!
    api = await createTestApi({ resolveHost: async () => ['93.184.216.34'] })
    const url = 'https://hooks.partner.example/sandbox'
    const bodies = [
      { url },
      { url, events: ['sandbox.loan.issued'], rotate_secret: true },
      {},
      { rotate_secret: true },
      { url: 42 },
      { url, events: [] },
      { url, events: ['sandbox.nope'] },
      { url, events: 'sandbox.loan.issued' },
    ]
    for (const body of bodies) {
      const answer = await api.post('/api/sandbox/webhooks', body)
      expect(documented(body), `${JSON.stringify(body)}: ${answer.status} ${answer.body.error_code ?? ''}`).toBe(answer.status === 200)
    }
  })

  it('gives every parameter and header a type, as generators need to type them', () => {
    const parts = [...Object.entries(doc.components.headers as Json), ...Object.entries(doc.components.parameters as Json),
      ...listOperations().flatMap(({ where, operation }) => [
        ...((operation.parameters ?? []) as Json[]).map((p) => [`${where} ${p.name}`, p] as const),
        ...Object.entries(operation.responses as Json).flatMap(([status, answer]) => Object.entries((answer as Json).headers ?? {}).map(([name, h]) => [`${where} ${status} ${name}`, h as Json] as const)),
      ].filter(([, part]) => !part.$ref))]
    expect(parts.filter(([, part]) => !part.schema.type).map(([name]) => name)).toEqual([])
  })

  it('gives every string with a pattern an example in it, and x-request-id the same one, as a mock server (prism mock) answers "string" for a string without one', () => {
    const missing: string[] = []
    const visit = (schema: unknown, where: string): void => {
      if (!schema || typeof schema !== 'object') return
      const node = schema as Json
      if (node.type === 'string' && node.pattern) {
        const pattern = new RegExp(node.pattern as string, 'u')
        if (!(node.examples as unknown[] | undefined)?.some((example) => typeof example === 'string' && pattern.test(example))) missing.push(where)
      }
      for (const [key, value] of Object.entries(node)) visit(value, `${where}/${key}`)
    }
    // Request schemas are for validating what a client sends; a mock only makes up answers.
    const answers = Object.entries(doc.components.schemas as Json).filter(([id]) => !id.endsWith('Request'))
    for (const [id, schema] of answers) visit(schema, id)
    expect(missing).toEqual([])
    expect(doc.components.headers.RequestId.example).toMatch(/^req_/)
    expect(doc.components.headers.RequestId.example).toBe(doc.components.schemas.ConfigAnswer.properties.request_id.examples[0])
  })

  it('marks as required the headers every such answer carries: x-request-id on each answer of the API, Retry-After on a 429, Allow on a 405', () => {
    const missing: string[] = []
    for (const { where, operation } of listOperations().filter(({ where }) => where.includes('/api/sandbox/') && !where.endsWith('openapi.json'))) {
      for (const [status, answer] of Object.entries(operation.responses as Json)) {
        const headers = (answer as Json).headers as Json
        const required = (name: string) => headers[name]?.required ?? (headers[name]?.$ref === '#/components/headers/RequestId' && doc.components.headers.RequestId.required)
        const expected = ['x-request-id', ...(status === '429' ? ['Retry-After'] : []), ...(status === '405' ? ['Allow'] : [])]
        for (const name of expected) if (required(name) !== true) missing.push(`${where} ${status} ${name}`)
      }
    }
    expect(missing).toEqual([])
  })

  it('gives examples that match their schemas', () => {
    const mismatches: string[] = []
    for (const { where, operation } of listOperations()) {
      const media = [['request', operation.requestBody], ...Object.entries(operation.responses)]
        .map(([name, part]) => [name, (part as Json | undefined)?.content?.['application/json']] as const)
      for (const [name, content] of media) {
        if (content?.example === undefined) continue
        const validate = ajv.compile(resolveLocalRefs(content.schema))
        if (!validate(content.example)) mismatches.push(`${where} ${name}: ${ajv.errorsText(validate.errors)}`)
      }
    }
    expect(mismatches).toEqual([])
  })
})

/** Points the document's local refs at the loaded document, so an inline schema can be compiled alone. */
function resolveLocalRefs(schema: Json): Json {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${BASE}#/components/`))
}
