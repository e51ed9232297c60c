import { z } from 'zod'
import { canSendInHeader } from '../client/header-value.js'
import { refineScenario } from './check-scenario.js'

const variableName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name: letters, digits and _, not starting with a digit')

/**
 * Key names the runner gives a meaning of its own (run-scenario.ts). Declared in `keys`, either
 * would quietly become a fresh key: "main" in place of --api-key, "none" as a key that is sent.
 */
const RESERVED_KEY_NAMES: Record<string, string> = {
  main: '"main" is always there: it is the run\'s own key (--api-key, or a fresh one), so list only the other keys',
  none: '"none" means sending no key (a step\'s "key": "none"), so it cannot name one: pick another name',
}

const keyName = variableName.superRefine((name, ctx) => {
  if (Object.hasOwn(RESERVED_KEY_NAMES, name)) ctx.addIssue({ code: 'custom', message: RESERVED_KEY_NAMES[name]! })
})

/**
 * A header name as HTTP has them (RFC 9110 token), or one from a `{{variable}}`. Anything else
 * (a colon copied from `curl -v`, a space) made the check throw after the request went out, or,
 * for a webhook's headers, never match, so that `$exists: false` held without checking anything.
 */
const headerName = z.string().regex(/^(?:[!#$%&'*+.^_`|~0-9A-Za-z-]|\{\{[^{}]*\}\})+$/, "an HTTP header name: letters, digits and !#$%&'*+-.^_`|~, without spaces or a colon")

/** A path that is a whole URL (copied from curl) says where the server part comes from. */
function describePathIssue(input: unknown): string {
  const server = typeof input === 'string' ? /^https?:\/\/[^/?#]*/i.exec(input) : null
  if (!server) return 'a path starting with /'
  const path = (input as string).slice(server[0].length)
  return `a path starting with /, without the server: the run puts its base URL (--base-url, or its own server) before it, "${path.startsWith('/') ? path : `/${path}`}"`
}

/** Whether zod is about to say "expected ..., received object": a matcher, here where none is applied. */
const isObjectInput = (input: unknown) => typeof input === 'object' && input !== null

/** What a step expects of its answer (or of the webhook event it waited for). */
export const expectationSchema = z
  .object({
    status: z
      .number({ error: (issue) => (isObjectInput(issue.input) ? 'the HTTP status as a whole number (200, 409, ...); a matcher is for body paths and headers' : undefined) })
      .int().min(100).max(599).optional().describe('HTTP status'),
    error_code: z
      .string({ error: (issue) => (isObjectInput(issue.input) ? `the error code as text, or null for none; a matcher checks it as a body path: "body": {"error_code": ${JSON.stringify(issue.input)}}` : undefined) })
      .nullable().optional().describe('the body `error_code`; null expects none'),
    body: z.record(z.string(), z.unknown()).optional().describe('value or matcher at each body path'),
    headers: z.record(headerName, z.unknown()).optional().describe('value or matcher per header name'),
  })
  .strict()

/** A webhook wait checks the event's body and headers: it has no status or error code. */
const webhookExpectationSchema = expectationSchema.pick({ body: true, headers: true }).strict()

const requestSchema = z
  .object({
    method: z.enum(['GET', 'POST', 'DELETE']),
    path: z.string().startsWith('/', { error: (issue) => describePathIssue(issue.input) }),
    body: z.unknown().optional(),
    key: z.string().optional().describe('a named key of the scenario; default "main"; "none" sends no key'),
    idempotency_key: z
      .string()
      .refine((key) => key.includes('{{') || canSendInHeader(key), {
        message: 'an HTTP header carries Latin-1 text only, without control characters: this key cannot be sent (to see the server refuse a key outside printable ASCII, use a character such as é)',
      })
      .nullable()
      .optional()
      .describe('default: a fresh one per request; null sends no Idempotency-Key header, "" an empty one'),
    drop_answer: z.boolean().optional().describe('close the connection once the answer starts, as if it was lost'),
    until_ms: z
      .number()
      .int()
      .positive()
      .max(120_000)
      .optional()
      .describe('GET only: send again every 100 ms until `expect` holds or this many ms have passed (for what the server records after its answer, such as the delivery log)'),
  })
  .strict()
  .refine((request) => request.until_ms === undefined || request.method === 'GET', {
    message: 'until_ms is for GET requests only: a POST or DELETE sent again would act again',
    path: ['until_ms'],
  })
  .refine((request) => request.until_ms === undefined || !request.drop_answer, {
    message: 'until_ms needs the answers: it cannot go with drop_answer',
    path: ['until_ms'],
  })
  .refine((request) => request.body === undefined || request.method !== 'GET', {
    message: 'a GET sends no body',
    path: ['body'],
  })

const waitSchema = z
  .object({
    type: z.string().describe('the event type the next delivery must have'),
    secret: z.string().optional().describe('the signing secret; when set the signature must verify'),
    timeout_ms: z.number().int().positive().max(120_000).optional(),
  })
  .strict()

const recoverSchema = z
  .object({
    flow: z.enum(['loan', 'repayment']),
    operation_id: z.string().optional().describe('repayment flow: which operation'),
  })
  .strict()

const stepBase = {
  name: z.string().optional(),
  expect: expectationSchema.optional(),
  capture: z.record(variableName, z.string()).optional().describe('variable -> body path'),
}

/**
 * Each kind of step, under the key that makes a step that kind. A step has exactly one of these
 * keys, so the loader picks the kind by key to report a mistake with its field.
 */
export const stepKinds = {
  request: z.object({ ...stepBase, request: requestSchema }).strict()
    .refine((step) => !step.request.drop_answer || (step.expect === undefined && step.capture === undefined), {
      message: 'drop_answer throws the answer away, so there is nothing to expect or capture: check it with a replay step after',
      path: ['request', 'drop_answer'],
    }),
  replay: z.object({ ...stepBase, replay: z.literal(true) }).strict(),
  wait_for_webhook: z.object({ ...stepBase, expect: webhookExpectationSchema.optional(), wait_for_webhook: waitSchema }).strict(),
  recover: z.object({ name: stepBase.name, recover: recoverSchema }).strict(),
}

/** One step: a request, a replay of the previous one, a wait for a webhook, or a recovery. */
export const stepSchema = z.union([stepKinds.request, stepKinds.replay, stepKinds.wait_for_webhook, stepKinds.recover])

/**
 * The shape of a scenario file, without the checks across fields (variables, keys, matchers):
 * what a JSON Schema can say of it (scenario-json-schema.ts).
 */
export const scenarioFileSchema = z
  .object({
    $schema: z.string().optional().describe('for editors: the path or URL of this JSON Schema (dist/scenario.schema.json in the package)'),
    name: z.string().min(1).describe('shown in the report beside the id (the file name)'),
    description: z.string().min(1).describe('what the scenario checks, in a sentence or two'),
    tags: z.array(z.string().regex(/^[a-z0-9-]+$/, 'lower-case words joined by -')).default([]).describe('for `sandbox run --tag`; `local-only` runs only against a local server'),
    keys: z.array(keyName)
      .refine((keys) => new Set(keys).size === keys.length, 'names each key once')
      .optional()
      .describe('extra named keys besides "main", each a fresh open-mode key'),
    steps: z.array(stepSchema).min(1).describe('run in order; a step is a request, a replay of the previous request, a wait for a webhook, or a recovery'),
  })
  .strict()

/**
 * A scenario file: `scenarios/<id>.json`. Valid here is valid for `sandbox run`: the schema also
 * checks variables, keys, matchers and paths (check-scenario.ts).
 */
export const scenarioSchema = scenarioFileSchema.superRefine(refineScenario)

/** A scenario as written in its file. */
export type ScenarioFile = z.infer<typeof scenarioFileSchema>
/** One step of a scenario. */
export type ScenarioStep = z.infer<typeof stepSchema>
/** The `expect` block of a step. */
export type Expectation = z.infer<typeof expectationSchema>

/** A loaded scenario: its file's content plus its id (the file name) and path. */
export interface Scenario extends ScenarioFile {
  id: string
  file: string
}
