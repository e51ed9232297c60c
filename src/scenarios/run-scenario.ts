import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseRetryAfter, sendRequest, type ClientAnswer, type ClientRequest, type TransportOptions } from '../client/send-request.js'
import { checkAnswer } from './check-expectation.js'
import { interpolate, type Variables } from './interpolate.js'
import { readPath } from './json-path.js'
import { findNextFlowAction, planRecovery } from './recover-step.js'
import type { ScenarioReport, StepFailure, StepReport } from './report-types.js'
import type { Scenario, ScenarioStep } from './scenario-schema.js'
import { sendDroppingAnswer } from './drop-answer.js'
import { waitForWebhook } from './wait-for-webhook.js'
import type { WebhookInbox } from './webhook-inbox.js'

/** How often a step with `until_ms` sends its GET again. */
const UNTIL_INTERVAL_MS = 100

/** 401 codes that refuse the key itself, whatever the request: no later step can pass with it. */
const KEY_REFUSED_CODES = new Set(['SANDBOX_API_KEY_INVALID', 'SANDBOX_API_KEY_REQUIRED', 'SANDBOX_SESSION_REQUIRED'])

/** What a scenario needs from the run around it. */
export interface ScenarioContext {
  baseUrl: string
  /** Used as the scenario's "main" key; otherwise a fresh open-mode key per scenario. */
  apiKey?: string
  transport?: Omit<TransportOptions, 'baseUrl' | 'apiKey'>
  /** The run's webhook receiver, started on first use. */
  getInbox(): Promise<WebhookInbox>
  /** Called as each step finishes, for live progress. */
  onStep?(scenario: Scenario, step: StepReport): void
}

/** A fresh, well-formed open-mode key. */
export function generateKey(label: string): string {
  return `sk_sandbox_run_${label.replace(/[^A-Za-z0-9]/g, '_').slice(0, 24)}_${randomBytes(10).toString('hex')}`
}

function describeStep(step: ScenarioStep, index: number): string {
  if (step.name) return step.name
  if ('request' in step) {
    const action = (step.request.body as { action?: unknown } | undefined)?.action
    return `${step.request.method} ${step.request.path}${typeof action === 'string' ? ` ${action}` : ''}`
  }
  if ('replay' in step) return 'replay the previous request'
  if ('wait_for_webhook' in step) return `webhook ${step.wait_for_webhook.type}`
  return `recover the ${step.recover.flow} flow from GET state`
}

/** Runs one scenario's steps in order, stopping at the first failed step. */
export async function runScenario(scenario: Scenario, context: ScenarioContext): Promise<ScenarioReport> {
  const started = performance.now()
  const run = randomBytes(6).toString('hex')
  const keys = new Map<string, string | null>([['main', context.apiKey ?? generateKey(scenario.id)], ['none', null]])
  for (const name of scenario.keys ?? []) keys.set(name, generateKey(`${scenario.id}_${name}`))
  const variables: Variables = new Map<string, unknown>([['$run', run]])
  const report: ScenarioReport = { id: scenario.id, name: scenario.name, file: scenario.file, tags: scenario.tags, status: 'passed', duration_ms: 0, requests: 0, steps: [] }
  let previous: { request: ClientRequest; keyName: string } | undefined
  // What this scenario opened itself, so that a 409 about anything else on a shared key is named a leftover.
  const opened = { draft: false, operations: new Set<string>() }
  const send = async (request: ClientRequest, keyName: string): Promise<ClientAnswer> => {
    const answer = await sendRequest({ ...context.transport, baseUrl: context.baseUrl, apiKey: keys.get(keyName) ?? null }, request)
    report.requests += answer.attempts
    return answer
  }

  let current = -1
  try {
    if (JSON.stringify(scenario.steps).includes('$receiver_url')) {
      variables.set('$receiver_url', `${(await context.getInbox()).url}/hooks/${run}`)
    }
    for (let index = 0; index < scenario.steps.length; index++) {
      const step = scenario.steps[index]!
      current = index
      const stepStarted = performance.now()
      const result: StepReport = { index, name: describeStep(step, index), kind: 'request', method: '', path: '', status: null, error_code: null, duration_ms: 0, ok: true, failures: [] }
      // A 401 refusing one of the run's keys stops the run: no later scenario can pass with it.
      const noteKeyRefusal = (answer: ClientAnswer, keyName: string, expected: number | undefined) => {
        if (!isKeyRefusal(answer, keyName, expected)) return
        report.key_refused = true
        result.note = describeKeyRefusal(answer, keyName, keyName === 'main' && context.apiKey !== undefined)
      }
      let failures: StepFailure[] = []
      let jumpTo: number | undefined
      if ('recover' in step) {
        result.kind = 'recover'
        const answer = await send({ method: 'GET', path: '/api/sandbox/state' }, 'main')
        Object.assign(result, { method: 'GET', path: '/api/sandbox/state', status: answer.status, error_code: answer.errorCode })
        failures = checkAnswer(answer, { status: 200 })
        if (failures.length > 0) noteKeyRefusal(answer, 'main', 200)
        if (failures.length === 0) {
          const operationId = step.recover.operation_id === undefined ? undefined : String(interpolate(step.recover.operation_id, variables))
          const plan = planRecovery(scenario, index, step.recover.flow, findNextFlowAction(answer.body, step.recover.flow, operationId))
          if ('error' in plan) failures.push({ field: 'recover', expected: 'a later step to continue at', actual: undefined, message: plan.error })
          else ({ jumpTo, note: result.note } = plan)
        }
      } else if ('wait_for_webhook' in step) {
        result.kind = 'wait_for_webhook'
        const wait = interpolate(step.wait_for_webhook, variables)
        const inbox = await context.getInbox()
        const outcome = await waitForWebhook(inbox, `/hooks/${run}`, wait, interpolate(step.expect, variables))
        Object.assign(result, { method: 'WEBHOOK', path: wait.type, status: outcome.event ? 200 : null, note: outcome.note })
        failures = outcome.failures
        if (failures.length === 0) failures = capture(step.capture, outcome.event, variables)
        else result.received = outcome.event
      } else {
        let request: ClientRequest
        let keyName: string
        let drop = false
        let untilMs = 0
        if ('replay' in step) {
          result.kind = 'replay'
          if (!previous) throw new Error('nothing to replay')
          ;({ request, keyName } = previous)
        } else {
          const spec = interpolate(step.request, variables)
          keyName = spec.key ?? 'main'
          drop = spec.drop_answer === true
          untilMs = spec.until_ms ?? 0
          request = { method: spec.method, path: spec.path, body: spec.body, idempotencyKey: spec.idempotency_key }
          if (request.method === 'POST' && request.idempotencyKey === undefined) request.idempotencyKey = `run-${run}-${index}-${randomBytes(4).toString('hex')}`
        }
        previous = { request, keyName }
        result.method = request.method
        result.path = request.path
        result.sent = { body: request.body, idempotency_key: request.idempotencyKey ?? null }
        if (drop) {
          result.status = await sendDroppingAnswer(context.baseUrl, keys.get(keyName) ?? null, request)
          report.requests++
          result.note = 'answer dropped on purpose (the connection closed before the body was read)'
        } else {
          const expectation = interpolate(step.expect, variables)
          const { answer, sent } = await sendUntil(() => send(request, keyName), (candidate) => checkAnswer(candidate, expectation).length === 0, untilMs)
          failures = checkAnswer(answer, expectation)
          const held = failures.length === 0
          result.status = answer.status
          result.error_code = answer.errorCode
          if (failures.length === 0) failures = capture(step.capture, answer.body, variables)
          if (failures.length > 0) result.received = answer.body ?? answer.text
          if (sent > 1) result.note = held ? `sent ${sent} times until expect held` : `sent ${sent} times in ${untilMs} ms; expect never held`
          else if (answer.attempts > 1) result.note = `${answer.attempts} attempts`
          if (keyName === 'main' && answer.status < 300) noteOpened(opened, request, answer)
          if (failures.length > 0 && keyName === 'main' && context.apiKey !== undefined) result.note = describeLeftover(answer, opened) ?? result.note
          if (failures.length > 0 && answer.status === 429) result.note = describeRateLimit(answer, context.transport)
          if (failures.length > 0) noteKeyRefusal(answer, keyName, expectation?.status)
          const receiverUrl = variables.get('$receiver_url')
          if (failures.length > 0 && answer.errorCode === 'WEBHOOK_URL_INVALID' && typeof receiverUrl === 'string' && JSON.stringify(request.body ?? null).includes(receiverUrl)) {
            result.note = "the server refuses the runner's receiver on this machine: start it with `sandbox serve --allow-local-webhooks`, or leave out the local-only scenarios"
          }
        }
      }
      result.failures = failures
      result.ok = failures.length === 0
      result.duration_ms = Math.round((performance.now() - stepStarted) * 100) / 100
      report.steps.push(result)
      context.onStep?.(scenario, result)
      if (!result.ok) {
        report.status = 'failed'
        break
      }
      if (jumpTo !== undefined) index = jumpTo - 1
    }
  } catch (error) {
    report.status = 'failed'
    report.error = (error as Error).message
    if ((error as Error).name === 'SandboxConnectionError') report.connection_error = true
    // Say where, as a failed expectation does (a connection error is about the server, not a step).
    else if (current >= 0) report.error = `step ${current + 1} (${describeStep(scenario.steps[current]!, current)}): ${report.error}`
  }
  report.duration_ms = Math.round(performance.now() - started)
  return report
}

/** Keeps track of the draft and repayment operations a scenario opened with its main key. */
function noteOpened(opened: { draft: boolean; operations: Set<string> }, request: ClientRequest, answer: ClientAnswer): void {
  const action = (request.body as { action?: unknown } | undefined)?.action
  if (action === 'start_collateral_transfer') opened.draft = true
  if (action === 'complete_payout') opened.draft = false
  const operation = answer.body?.sandboxFlow?.repaymentOperations?.at?.(-1)?.operation_id
  if (action === 'start_payment' && typeof operation === 'string') opened.operations.add(operation)
}

/**
 * A 409 for a draft or repayment operation the scenario did not open, on a key runs share: most
 * likely left by an earlier run that failed or was stopped, and every later run fails on it alike
 * until it is finished, so say which and how to get rid of it.
 */
function describeLeftover(answer: ClientAnswer, opened: { draft: boolean; operations: Set<string> }): string | undefined {
  const details = (answer.body?.details ?? {}) as Record<string, unknown>
  const fix = '`sandbox keys reset KEY` (a registered key) or a fresh key starts clean'
  if (details.reason === 'DRAFT_ALREADY_OPEN' && !opened.draft) {
    return `the key already had a draft open (application ${String(details.application_id)}, ${String(details.current_status)}; next: ${String(details.expected_action)}), most likely left by an earlier run on this shared key that failed or was stopped: finish it (the shipped scenarios do, in their "leftover draft" steps), or ${fix}`
  }
  if (details.reason === 'OPERATION_IN_PROGRESS' && !opened.operations.has(String(details.operation_id))) {
    return `the loan already had repayment operation ${String(details.operation_id)} open (${String(details.current_status)}; next: ${String(details.expected_action)}), most likely left by an earlier run on this shared key that failed or was stopped: finish it with the repayment flow, or ${fix}`
  }
  return undefined
}

/** A 401 that refuses one of the run's keys itself, where the step expected no 401. */
function isKeyRefusal(answer: ClientAnswer, keyName: string, expectedStatus: number | undefined): boolean {
  return answer.status === 401 && expectedStatus !== 401 && keyName !== 'none' && KEY_REFUSED_CODES.has(answer.errorCode ?? '')
}

/**
 * What to do about a server refusing one of the run's keys, with the server's own reason (`The
 * API key is revoked.`): a registered-keys server refuses every generated key, and a given key
 * that is unknown, revoked, expired or without a session fails every scenario alike.
 */
function describeKeyRefusal(answer: ClientAnswer, keyName: string, given: boolean): string {
  const refusal = `401 ${answer.errorCode}${typeof answer.body?.error === 'string' ? `: ${answer.body.error}` : ''}`
  if (answer.errorCode === 'SANDBOX_API_KEY_REQUIRED') return `the server got no key although the run sent one (${refusal}); is a proxy in between dropping the Authorization header?`
  if (answer.errorCode === 'SANDBOX_SESSION_REQUIRED') return `the server has no session for the run's key (${refusal}): \`sandbox keys reset KEY\` recreates it`
  if (given) return `the server refuses the run's --api-key (${refusal}): check it with \`sandbox keys list\`, or create one with \`sandbox keys create\``
  const which = keyName === 'main' ? 'a fresh generated key' : `the scenario's generated key "${keyName}"`
  return `the server accepts only registered keys (${which} got ${refusal}): pass one with --api-key (\`sandbox keys create --keys FILE\` makes one)`
}

/** Why a step ended on a 429 it did not expect: a Retry-After above the run's longest wait, or every retry spent. */
function describeRateLimit(answer: ClientAnswer, transport: ScenarioContext['transport']): string {
  const asked = Math.ceil(parseRetryAfter(answer.headers.get('retry-after')) / 1000)
  const max = Math.round((transport?.maxRetryAfterMs ?? 30_000) / 1000)
  if (asked > max) return `rate limited: the server asks to wait ${asked} s (Retry-After), longer than the ${max} s a run waits at most; run again later, or against a server with a higher --rate-limit`
  return `still rate limited after ${answer.attempts} attempts (each waited its Retry-After): another client may be using this key`
}

/** Sends until `holds` accepts the answer or `untilMs` has passed (0: once); the last answer. */
async function sendUntil(sendOnce: () => Promise<ClientAnswer>, holds: (answer: ClientAnswer) => boolean, untilMs: number): Promise<{ answer: ClientAnswer; sent: number }> {
  const deadline = performance.now() + untilMs
  let answer = await sendOnce()
  let sent = 1
  while (!holds(answer) && performance.now() < deadline) {
    await sleep(UNTIL_INTERVAL_MS)
    answer = await sendOnce()
    sent++
  }
  return { answer, sent }
}

/** Stores the values a step captures; a missing value is a failure of that step. */
function capture(spec: Record<string, string> | undefined, body: unknown, variables: Variables): StepFailure[] {
  const failures: StepFailure[] = []
  for (const [name, path] of Object.entries(spec ?? {})) {
    const value = readPath(body, String(interpolate(path, variables)))
    if (value === undefined) failures.push({ field: `capture.${name}`, expected: `a value at ${path}`, actual: undefined, message: `capture ${name}: nothing at ${path}` })
    else variables.set(name, value)
  }
  return failures
}
