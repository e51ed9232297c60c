import type { z } from 'zod'
import { ErrorCodes, type ErrorCode } from '../errors/codes.js'
import type { EventType } from '../domain/types.js'
import { EVENT_TYPES } from '../webhooks/types.js'
import { buildComponentSchemas } from './json-schemas.js'
import { OPERATIONS, type Operation } from './operations.js'
import { DECISIONS } from './decisions.js'
import { IGNORED_FIELDS_HEADER } from '../server/ignored-fields.js'
import { eventObjectSchemas } from '../schemas/responses/event-objects.js'
import { REQUEST_ID_EXAMPLE } from '../schemas/responses/answers.js'
import { buildEventExamples } from './event-examples.js'

type Json = Record<string, unknown>
const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` })
const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema })

/** Codes any authenticated call can answer; writes add the body ones, POSTs the idempotency ones. */
const COMMON_ERRORS: ErrorCode[] = ['SANDBOX_API_KEY_REQUIRED', 'SANDBOX_API_KEY_INVALID', 'SANDBOX_SESSION_REQUIRED', 'SANDBOX_RATE_LIMIT_EXCEEDED', 'SANDBOX_API_KEY_DATABASE_REQUIRED', 'INTERNAL_ERROR']
/** POST and DELETE read the body before anything else: broken, too deep (INVALID_REQUEST) or too large. */
const BODY_ERRORS: ErrorCode[] = ['INVALID_JSON', 'INVALID_REQUEST', 'PAYLOAD_TOO_LARGE']
/** A malformed Idempotency-Key is INVALID_REQUEST too, on every POST (already in BODY_ERRORS). */
const POST_ERRORS: ErrorCode[] = ['IDEMPOTENCY_KEY_REQUIRED', 'IDEMPOTENCY_KEY_CONFLICT', 'IDEMPOTENCY_KEY_IN_PROGRESS']

const REQUEST_ID_HEADER = { 'x-request-id': { $ref: '#/components/headers/RequestId' } }
const RESPONSE_HEADERS = {
  ...REQUEST_ID_HEADER,
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
}
const REPLAYED_HEADER = { 'idempotent-replayed': { $ref: '#/components/headers/IdempotentReplayed' } }
const IGNORED_FIELDS = { [IGNORED_FIELDS_HEADER]: { $ref: '#/components/headers/SandboxIgnoredFields' } }
/** Statuses a POST stores under its Idempotency-Key, and so can replay (decisions.md "Idempotency"). */
const REPLAYABLE_STATUSES = new Set([200, 404, 409])

/** `serve --faults` can answer any API route with SANDBOX_FAULT_INJECTED under either status, not only its usual 503. */
const FAULT_STATUSES = [500, 503]

/** The error codes of an operation, grouped by their HTTP status. */
export function errorCodesByStatus(op: Operation): Map<number, ErrorCode[]> {
  const codes = new Set<ErrorCode>([...COMMON_ERRORS, ...(op.method === 'get' ? [] : BODY_ERRORS), ...(op.method === 'post' ? POST_ERRORS : []), ...op.errors])
  const byStatus = new Map<number, ErrorCode[]>()
  const add = (status: number, code: ErrorCode) => byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  for (const code of codes) add(ErrorCodes[code], code)
  for (const status of FAULT_STATUSES) add(status, 'SANDBOX_FAULT_INJECTED')
  return new Map([...byStatus].sort(([a], [b]) => a - b))
}

/** Example texts for the codes partners meet most. */
const ERROR_EXAMPLES: Partial<Record<ErrorCode, string>> = {
  FLOW_CONFLICT: 'run_kyt is not allowed now: the draft is awaiting_collateral; the next step is confirm_btc.',
  SANDBOX_API_KEY_REQUIRED: 'Send your sandbox API key as "Authorization: Bearer sk_sandbox_...".',
  INVALID_JSON: 'The request body is not valid JSON.',
  LOAN_NOT_FOUND: 'No loan loan_123 for this key.',
  NOT_FOUND: 'No such endpoint.',
}

function errorResponse(status: number, codes: ErrorCode[], replayable = false): Json {
  // A stored outcome (a 404, a 409) ran the request, so it names the fields it ignored, as a 200 does.
  const headers: Json = { ...RESPONSE_HEADERS, ...(replayable ? { ...REPLAYED_HEADER, ...IGNORED_FIELDS } : {}) }
  if (status === 429) headers['Retry-After'] = { ...header('Seconds until the window lets the key in again.', { type: 'integer' }), required: true }
  if (FAULT_STATUSES.includes(status)) headers['Retry-After'] = header('Only on SANDBOX_FAULT_INJECTED, when the serve --faults rule gives retry_after: seconds to wait.', { type: 'integer' })
  return {
    description: `error_code: ${codes.join(', ')}`,
    headers,
    content: {
      'application/json': {
        schema: { allOf: [ref('Error'), { type: 'object', properties: { error_code: { enum: codes } } }] },
        example: { request_id: REQUEST_ID_EXAMPLE, error_code: codes[0], error: ERROR_EXAMPLES[codes[0]!] ?? 'See error_code.' },
      },
    },
  }
}

function buildOperation(op: Operation): Json {
  const parameters: Json[] = []
  if (op.path.includes('{loanId}')) parameters.push({ name: 'loanId', in: 'path', required: true, schema: { type: 'string' }, description: 'A loan id (`loan_...`) of this key; another key\'s loan is 404 LOAN_NOT_FOUND.' })
  if (op.idempotent) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' })
  const responses: Json = {
    200: { description: op.summary, headers: { ...RESPONSE_HEADERS, ...(op.idempotent ? REPLAYED_HEADER : {}), ...(op.method === 'get' ? {} : IGNORED_FIELDS) }, content: { 'application/json': { schema: ref(idOf(op.answer)) } } },
  }
  for (const [status, codes] of errorCodesByStatus(op)) responses[status] = errorResponse(status, codes, op.idempotent && REPLAYABLE_STATUSES.has(status))
  responses[404] ??= errorResponse(404, ['NOT_FOUND'])
  // A GET has no body to refuse, yet these two come before any route runs (listen.ts, create-sandbox.ts).
  responses[400] ??= { ...errorResponse(400, ['INVALID_REQUEST']), description: 'error_code: INVALID_REQUEST (an HTTP/1.1 request without a Host header, or a path whose percent-encoding does not decode)' }
  // Answered by Node's HTTP layer before the route runs, in the same envelope (client-errors.ts).
  responses[408] = { ...errorResponse(408, ['INVALID_REQUEST']), description: 'error_code: INVALID_REQUEST (the request, body included, did not arrive in time)' }
  responses[431] = { ...errorResponse(431, ['INVALID_REQUEST']), description: 'error_code: INVALID_REQUEST (request line and headers over 16 KB)' }
  const notAllowed = errorResponse(405, ['METHOD_NOT_ALLOWED'])
  responses[405] = { ...notAllowed, headers: { ...(notAllowed.headers as Json), Allow: { ...header('The methods this path accepts.'), required: true } } }
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
    parameters,
    ...(op.request ? { requestBody: { required: isBodyRequired(op.request), content: { 'application/json': { schema: ref(op.request.id), example: op.request.example } } } } : {}),
    responses,
  }
}

/** No body is read as `{}`, so unless the operation says otherwise a body is optional wherever `{}` is valid. */
function isBodyRequired(request: NonNullable<Operation['request']>): boolean {
  return !(request.optional ?? request.schema.safeParse({}).success)
}

function idOf(schema: z.ZodType): string {
  const id = (schema as { meta(): { id?: string } | undefined }).meta()?.id
  if (!id) throw new Error('every answer and event object schema needs a meta id')
  return id
}

/** `sandbox.loan_application.updated` -> `onLoanApplicationUpdated`: the name generators give the receiver's handler. */
function webhookOperationId(type: string): string {
  return `on${type.replace(/^sandbox\./, '').split(/[._]/).map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')}`
}

/** An event of `type`: the shared WebhookEvent, with `type` fixed and `data.object` the schema of what that event carries. */
function eventSchema(type: EventType): Json {
  return {
    allOf: [
      ref('WebhookEvent'),
      { type: 'object', properties: { type: { type: 'string', const: type }, data: { type: 'object', properties: { object: ref(idOf(eventObjectSchemas[type])) }, required: ['object'] } }, required: ['type', 'data'] },
    ],
  }
}

function buildWebhooks(): Json {
  const examples = buildEventExamples()
  return Object.fromEntries(EVENT_TYPES.map((type) => [type, {
    post: {
      operationId: webhookOperationId(type),
      summary: `${type} delivery`,
      description: 'POSTed to the key\'s endpoint (and to serve --webhook-forward-to). Verify the signature over the raw body before parsing; answer 2xx within 10 s, duplicates included.',
      parameters: [
        { name: 'x-service-webhook-id', in: 'header', required: true, schema: { type: 'string' }, description: 'The event id; deduplicate by it.' },
        { name: 'x-service-webhook-event', in: 'header', required: true, schema: { type: 'string', const: type } },
        { name: 'x-service-webhook-timestamp', in: 'header', required: true, schema: { type: 'string', pattern: '^\\d+$' }, description: 'Unix seconds; refuse more than 5 minutes away.' },
        { name: 'x-service-webhook-signature', in: 'header', required: true, schema: { type: 'string', pattern: '^v1=[0-9a-f]{64}' }, description: 'v1=<lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>", keyed with the whole whsec_ secret>.' },
      ],
      // The sandbox sends no Authorization header: without this the document-wide sandboxKey
      // requirement would apply to deliveries too, and a receiver generated from it would refuse them.
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: eventSchema(type),
            example: examples.get(type),
          },
        },
      },
      responses: { '2XX': { description: 'Delivered. Anything else, a timeout or a network error moves the delivery to retrying (5 s, 30 s, 2 min, 10 min), then failed.' } },
    },
  }]))
}

/** The OpenAPI 3.1 document of the sandbox, generated from its zod schemas (`serverUrl`: the origin its `servers` names, default http://127.0.0.1:4010). */
export function buildOpenApiDocument(options: { version?: string; serverUrl?: string } = {}): Json {
  const paths: Json = {}
  for (const op of OPERATIONS) paths[op.path] = { ...(paths[op.path] as Json | undefined), [op.method]: buildOperation(op) }
  paths['/api/sandbox/openapi.json'] = {
    get: { operationId: 'getOpenApiDocument', tags: ['Config and state'], summary: 'This document', description: 'Needs no key; the document `sandbox openapi` prints and the package ships as dist/openapi.json, with `servers` naming the origin the request reached.', security: [], responses: { 200: { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } } },
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Partner API sandbox', version: options.version ?? '0.3.0', description: DECISIONS },
    servers: [options.serverUrl ? { url: options.serverUrl, description: 'the sandbox that served this document' } : { url: 'http://127.0.0.1:4010', description: 'sandbox serve (default port)' }],
    security: [{ sandboxKey: [] }],
    tags: [{ name: 'Config and state' }, { name: 'Loans' }, { name: 'Partner' }, { name: 'Webhooks' }],
    paths,
    webhooks: buildWebhooks(),
    components: {
      securitySchemes: { sandboxKey: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer sk_sandbox_...`: any well-formed key in open mode; only registered keys with serve --keys.' } },
      parameters: {
        IdempotencyKey: { name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' }, description: 'Required on every POST. Same key + same method, path and body within 24 h: the stored answer again (idempotency_replayed: true). Same key, other request: 409 IDEMPOTENCY_KEY_CONFLICT; still running: 409 IDEMPOTENCY_KEY_IN_PROGRESS.' },
      },
      headers: {
        // Required: on every answer (decisions.md "Envelope"), so validating proxies check it is there.
        RequestId: { ...header('The answer\'s request id, the same as the body request_id.'), required: true, example: REQUEST_ID_EXAMPLE },
        RateLimitLimit: header('Requests allowed per window for this key. On every answer to a request with a key the sandbox knows; a 401, 404 NOT_FOUND or 405 shows the window without counting the request. Absent without a known key, and with --rate-limit off.', { type: 'integer' }),
        RateLimitRemaining: header('Requests left in the current window.', { type: 'integer' }),
        RateLimitReset: header('Seconds until the window frees a request.', { type: 'integer' }),
        SandboxIgnoredFields: header('This sandbox only (the spec has no such header): the top-level body fields the operation does not know and ignored, such as a misspelt optional field (`nmae` for `name`), percent-encoded (an empty name as `""`) and separated by `, ` (at most 10 named, then `+N more`; a name over 64 characters is cut, ending in `…`). On the answer of a write that was carried out (a 200, or a 404 or 409 stored under the Idempotency-Key; a DELETE, which takes no body, names any it was sent), not on its replays; absent when every field was known.'),
        IdempotentReplayed: header('`true` when the answer is the one stored under this Idempotency-Key, replayed; absent otherwise.', { type: 'string', const: 'true' }),
      },
      schemas: buildComponentSchemas(OPERATIONS),
    },
  }
}
