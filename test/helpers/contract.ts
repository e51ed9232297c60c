import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { buildOpenApiDocument } from '../../src/openapi/build-document.js'

type Json = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
const BASE = 'https://sandbox.local/openapi.json'

const document = buildOpenApiDocument() as Json
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
// The whole document as one schema resource, so `#/components/schemas/X` refs resolve inside it.
ajv.addSchema({ ...document, $id: BASE })
const validators = new Map<string, ValidateFunction>()

/** Headers a client may act on: each one the server sends must be declared for that status. */
const CHECKED_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'allow', 'idempotent-replayed', 'x-sandbox-ignored-fields']

const pointer = (...parts: string[]) => parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')

// Path templates as patterns, built once: every answer of every API test is matched against them.
const templates = Object.entries(document.paths as Json).map(([template, item]) => ({
  template,
  item: item as Json,
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}))

function findOperation(method: string, path: string): { template: string; operation: Json } | undefined {
  const found = templates.find(({ pattern, item }) => pattern.test(path) && item[method.toLowerCase()])
  return found && { template: found.template, operation: found.item[method.toLowerCase()] }
}

function validatorFor(template: string, method: string, status: string): ValidateFunction {
  return compileRef(`${BASE}#/${pointer('paths', template, method.toLowerCase(), 'responses', status, 'content', 'application/json', 'schema')}`)
}

/** The validator of the schema at `ref` in the document, compiled once. */
function compileRef(ref: string): ValidateFunction {
  let validate = validators.get(ref)
  if (!validate) {
    validate = ajv.compile({ $ref: ref })
    validators.set(ref, validate)
  }
  return validate
}

/**
 * Checks one answer of the API against the OpenAPI document: the status is declared for the
 * operation, the body matches that status's schema, and the envelope headers are there. Answers
 * the list of mismatches (empty when the answer keeps the contract).
 */
export function checkAnswerAgainstContract(method: string, url: string, status: number, headers: Headers, bodyText: string): string[] {
  const path = new URL(url, 'http://sandbox.local').pathname
  const where = `${method} ${path} → ${status}`
  const problems: string[] = []
  const found = findOperation(method, path)
  let body: unknown
  try {
    body = JSON.parse(bodyText)
  } catch {
    return [`${where}: body is not JSON: ${bodyText.slice(0, 100)}`]
  }
  if (path === '/api/sandbox/openapi.json' && status === 200) return []
  if (!found) {
    // Unknown paths and methods answer with the error envelope (404/405).
    if (status !== 404 && status !== 405) problems.push(`${where}: no operation for this path and method`)
    const validate = ajv.getSchema(`${BASE}#/components/schemas/Error`)!
    if (!validate(body)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`)
  } else {
    const declared = found.operation.responses[String(status)]
    if (!declared) return [`${where}: status ${status} is not declared for ${method} ${found.template}`]
    const validate = validatorFor(found.template, method, String(status))
    if (!validate(body)) problems.push(`${where}: ${ajv.errorsText(validate.errors, { separator: '; ' })}`)
    if (status === 429 && !headers.get('retry-after')) problems.push(`${where}: Retry-After missing`)
    if (status === 405 && !headers.get('allow')) problems.push(`${where}: Allow missing`)
    const declaredHeaders = new Set(Object.keys(declared.headers ?? {}).map((name) => name.toLowerCase()))
    for (const name of CHECKED_HEADERS) {
      if (headers.has(name) && !declaredHeaders.has(name)) problems.push(`${where}: header ${name} is sent but not declared`)
    }
  }
  const requestId = headers.get('x-request-id')
  if (!requestId) problems.push(`${where}: x-request-id header missing`)
  else if ((body as Json)?.request_id !== requestId) problems.push(`${where}: x-request-id ${requestId} differs from body request_id ${(body as Json)?.request_id}`)
  return problems
}

/** Throws when an answer breaks the contract, naming every mismatch. */
export function assertAnswerKeepsContract(method: string, url: string, status: number, headers: Headers, bodyText: string): void {
  const problems = checkAnswerAgainstContract(method, url, status, headers, bodyText)
  if (problems.length > 0) throw new Error(`answer breaks the OpenAPI contract:\n${problems.join('\n')}`)
}

/** What a webhook receiver got: the method, the headers as node gives them, and the raw body. */
export interface ReceivedDelivery {
  method?: string
  headers: Record<string, string | string[] | undefined>
  body: string
}

/**
 * Checks one webhook delivery against the document's `webhooks` entry for its
 * `x-service-webhook-event`: the method, the four signature headers (each required one there and
 * matching its schema), a JSON body matching that event's schema (its type and the shape of
 * `data.object`), and `x-service-webhook-id` naming the body's `id`. Answers the list of mismatches.
 */
export function checkDeliveryAgainstContract(delivery: ReceivedDelivery): string[] {
  const type = delivery.headers['x-service-webhook-event']
  const where = `delivery ${typeof type === 'string' ? type : '(no x-service-webhook-event)'}`
  const entry = typeof type === 'string' ? (document.webhooks as Json)[type]?.post : undefined
  if (!entry) return [`${where}: no webhook entry in the document for this x-service-webhook-event`]
  const problems: string[] = []
  if (delivery.method !== undefined && delivery.method !== 'POST') problems.push(`${where}: method ${delivery.method}, not POST`)
  const media = delivery.headers['content-type']
  if (typeof media !== 'string' || !media.startsWith('application/json')) problems.push(`${where}: content-type ${media}, not application/json`)
  ;(entry.parameters as Json[]).forEach((parameter, index) => {
    const value = delivery.headers[String(parameter.name).toLowerCase()]
    if (value === undefined) {
      if (parameter.required) problems.push(`${where}: header ${parameter.name} missing`)
      return
    }
    const validate = compileRef(`${BASE}#/${pointer('webhooks', type as string, 'post', 'parameters', String(index), 'schema')}`)
    if (!validate(value)) problems.push(`${where}: header ${parameter.name} ${JSON.stringify(value)}: ${ajv.errorsText(validate.errors, { dataVar: 'value' })}`)
  })
  let body: unknown
  try {
    body = JSON.parse(delivery.body)
  } catch {
    return [...problems, `${where}: body is not JSON: ${delivery.body.slice(0, 100)}`]
  }
  const validate = compileRef(`${BASE}#/${pointer('webhooks', type as string, 'post', 'requestBody', 'content', 'application/json', 'schema')}`)
  if (!validate(body)) problems.push(`${where}: ${ajv.errorsText(validate.errors, { separator: '; ', dataVar: 'body' })}`)
  const id = delivery.headers['x-service-webhook-id']
  if (id !== undefined && (body as Json)?.id !== id) problems.push(`${where}: x-service-webhook-id ${id} differs from body id ${(body as Json)?.id}`)
  return problems
}
