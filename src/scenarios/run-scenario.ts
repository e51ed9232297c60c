import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { sendRequest, type ClientAnswer, type ClientRequest, type TransportOptions } from '../client/send-request.js'
import { SandboxConnectionError } from '../client/api-error.js'
import { isGatewayError } from '../client/retry-rules.js'
import { checkAnswer } from './check-expectation.js'
import { interpolate, type Variables } from './interpolate.js'
import { readPath } from './json-path.js'
import { findNextFlowAction, planRecovery } from './recover-step.js'
import { excuseReplayOfLostAnswer } from './lost-answer.js'
import { maskStepSecrets } from './mask-step-secrets.js'
import type { ScenarioReport, StepFailure, StepReport } from './report-types.js'
import type { Scenario, ScenarioStep } from './scenario-schema.js'
import { sendDroppingAnswer } from './drop-answer.js'
import { usesReceiver } from './select-scenarios.js'
import { DEFAULT_WEBHOOK_TIMEOUT_MS, waitForWebhook } from './wait-for-webhook.js'
import type { WebhookInbox } from './webhook-inbox.js'
import { describeGatewayError, describeHttpsOnly, describeIgnoredFields, describeKeyRefusal, describeLeftover, describeRateLimit, describeRedirect, describeRefusedReceiverUrl, describeTunnelSilence, isKeyRefusal, REMOTE_WEBHOOK_NOTE } from './step-notes.js'

/** How often a step with `until_ms` sends its GET again. */
const UNTIL_INTERVAL_MS = 100

/** What a scenario needs from the run around it. */
export interface ScenarioContext {
  baseUrl: string
  /** Used as the scenario's "main" key; otherwise a fresh open-mode key per scenario. */
  apiKey?: string
  transport?: Omit<TransportOptions, 'baseUrl' | 'apiKey'>
  /** The server is on another machine: it cannot reach the runner's receiver, and its keys are not `sandbox keys` ones. */
  remote?: boolean
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
    if (usesReceiver(scenario)) {
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
        result.note = describeKeyRefusal(answer, keyName, keyName === 'main' && context.apiKey !== undefined, context.remote === true)
      }
      let failures: StepFailure[] = []
      let jumpTo: number | undefined
      if ('recover' in step) {
        result.kind = 'recover'
        const answer = await send({ method: 'GET', path: '/api/sandbox/state' }, 'main')
        Object.assign(result, { method: 'GET', path: '/api/sandbox/state', status: answer.status, error_code: answer.errorCode })
        failures = checkAnswer(answer, { status: 200 })
        // The answer says why (a 400 naming the https:// URL, a storage error): show it, as other steps do.
        if (failures.length > 0) result.received = answer.body ?? answer.text
        if (failures.length > 0) throwIfUnreachable(context.baseUrl, { method: 'GET', path: '/api/sandbox/state' }, answer, 200)
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
        if (!outcome.delivered && inbox.publicUrl !== undefined) result.note = describeTunnelSilence(inbox, wait.timeout_ms ?? DEFAULT_WEBHOOK_TIMEOUT_MS)
        else if (!outcome.event && context.remote) result.note = REMOTE_WEBHOOK_NOTE
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
          result.status = await sendDroppingAnswer(context.baseUrl, keys.get(keyName) ?? null, request, context.transport?.timeoutMs, context.transport?.onAttempt)
          report.requests++
          result.note = result.status === null
            ? 'answer lost on purpose (the server closed the connection before answering)'
            : 'answer dropped on purpose (the connection closed before the body was read)'
        } else {
          const expectation = interpolate(step.expect, variables)
          const { answer, sent } = await sendUntil(() => send(request, keyName), (candidate) => checkAnswer(candidate, expectation).length === 0, untilMs)
          failures = checkAnswer(answer, expectation)
          const excused = excuseReplayOfLostAnswer(failures, answer, answer.afterLostAnswer === true)
          if (excused) failures = excused
          const held = failures.length === 0
          result.status = answer.status
          result.error_code = answer.errorCode
          if (failures.length === 0) failures = capture(step.capture, answer.body, variables)
          if (failures.length > 0) result.received = answer.body ?? answer.text
          if (sent > 1) result.note = held ? `sent ${sent} times until expect held` : `sent ${sent} times in ${untilMs} ms; expect never held`
          else if (excused) result.note = `${answer.attempts} attempts: the first answer was lost, and this one is its replay (idempotency_replayed: true, accepted for the expected false)`
          else if (answer.attempts > 1) result.note = `${answer.attempts} attempts`
          const ignored = describeIgnoredFields(answer)
          if (ignored) result.note = result.note ? `${result.note}; ${ignored}` : ignored
          if (keyName === 'main' && answer.status < 300) noteOpened(opened, request, answer)
          if (failures.length > 0 && keyName === 'main' && context.apiKey !== undefined) result.note = describeLeftover(answer, opened) ?? result.note
          if (failures.length > 0 && answer.status === 429) result.note = describeRateLimit(answer, context.transport)
          if (failures.length > 0) noteKeyRefusal(answer, keyName, expectation?.status)
          const receiverUrl = variables.get('$receiver_url')
          if (failures.length > 0 && answer.errorCode === 'WEBHOOK_URL_INVALID' && typeof receiverUrl === 'string' && JSON.stringify(request.body ?? null).includes(receiverUrl)) {
            const { publicUrl } = await context.getInbox()
            if (publicUrl !== undefined) result.note = describeRefusedReceiverUrl(publicUrl, answer)
            else result.note = context.remote ? REMOTE_WEBHOOK_NOTE : "the server refuses the runner's receiver on this machine: start it with `sandbox serve --allow-local-webhooks`, or leave out the local-only scenarios"
          }
          if (failures.length > 0) throwIfUnreachable(context.baseUrl, request, answer, expectation?.status)
        }
      }
      result.failures = failures
      result.ok = failures.length === 0
      result.duration_ms = Math.round((performance.now() - stepStarted) * 100) / 100
      report.steps.push(maskStepSecrets(result))
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
 * A redirect, a proxy's 502/503/504 or a TLS server's 400 to plain HTTP that a step did not
 * expect: every later request would meet the same moved URL, dead server or refusal, a setup problem like a server that cannot be reached, which
 * stops the run (exit 2) instead of failing each scenario as if the API had.
 */
function throwIfUnreachable(baseUrl: string, request: ClientRequest, answer: ClientAnswer, expectedStatus: number | undefined): void {
  if (answer.status === expectedStatus) return
  if (answer.status >= 300 && answer.status < 400) throw new SandboxConnectionError(baseUrl, answer.attempts, { cause: undefined, message: describeRedirect(answer, request) })
  if (isGatewayError(answer)) throw new SandboxConnectionError(baseUrl, answer.attempts, { cause: undefined, message: describeGatewayError(answer, request) })
  const httpsOnly = describeHttpsOnly(baseUrl, answer)
  if (httpsOnly) throw new SandboxConnectionError(baseUrl, answer.attempts, { cause: undefined, message: httpsOnly })
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
