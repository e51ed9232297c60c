import { randomBytes } from 'node:crypto'
import { sendRequest } from '../client/send-request.js'
import type { ClientAnswer, ClientRequest } from '../client/request-types.js'
import { capture } from './capture-values.js'
import { checkAnswer } from './check-expectation.js'
import { failStepOnConnection, hasAnsweredStep, type RetryWait } from './connection-step.js'
import { describeStep } from './describe-step.js'
import { encodePathSegment, interpolate, UnknownVariableError, type Variables } from './interpolate.js'
import { describeSkippedCapture, findNextFlowAction, planRecovery, type RecoveryJump } from './recover-step.js'
import { excuseReplayOfLostAnswer } from './lost-answer.js'
import { maskStepSecrets } from './mask-step-secrets.js'
import type { ScenarioReport, StepFailure, StepReport } from './report-types.js'
import { generateKey, type ScenarioContext } from './scenario-context.js'
import type { Scenario } from './scenario-schema.js'
import { sendDroppingAnswer } from './drop-answer.js'
import { sendUntil } from './send-until.js'
import { usesReceiver } from './select-scenarios.js'
import { throwIfUnreachable } from './throw-if-unreachable.js'
import { DEFAULT_WEBHOOK_TIMEOUT_MS, waitForWebhook } from './wait-for-webhook.js'
import { addInfrastructureNote, describeIgnoredFields, describeKeyRefusal, describeLeftover, describeRateLimit, describeRefusedReceiverUrl, describeTunnelSilence, isKeyRefusal, REMOTE_WEBHOOK_NOTE } from './step-notes.js'

/**
 * Runs one scenario's steps in order, stopping at the first failed step. An abort of
 * `context.signal` rejects with its reason, with no report: a step cut off did not fail.
 */
export async function runScenario(scenario: Scenario, context: ScenarioContext): Promise<ScenarioReport> {
  const { signal } = context
  const started = performance.now()
  const run = randomBytes(6).toString('hex')
  const keys = new Map<string, string | null>([['main', context.apiKey ?? generateKey(scenario.id)], ['none', null]])
  for (const name of scenario.keys ?? []) keys.set(name, generateKey(`${scenario.id}_${name}`))
  const variables: Variables = new Map<string, unknown>([['$run', run]])
  const report: ScenarioReport = { id: scenario.id, name: scenario.name, file: scenario.file, tags: scenario.tags, status: 'passed', duration_ms: 0, requests: 0, steps: [] }
  let previous: { request: ClientRequest; keyName: string } | undefined
  // What this scenario opened itself, so that a 409 about anything else on a shared key is named a leftover.
  const opened = { draft: false, operations: new Set<string>() }
  // The current step's retry waits: the reports keep them should the server never answer it.
  const waits: RetryWait[] = []
  const onRetryWait = (wait: RetryWait) => {
    waits.push(wait)
    context.transport?.onRetryWait?.(wait)
  }
  const send = async (request: ClientRequest, keyName: string): Promise<ClientAnswer> => {
    const answer = await sendRequest({ ...context.transport, onRetryWait, ...(signal ? { signal } : {}), baseUrl: context.baseUrl, apiKey: keys.get(keyName) ?? null }, request)
    report.requests += answer.attempts
    return answer
  }

  // The recover steps' jumps: a variable captured only in a step jumped over is named so.
  const jumps: RecoveryJump[] = []
  let current = -1
  // The step under way, and when it began: a connection error reports it as the step it failed at.
  let underWay: StepReport | undefined
  let stepStarted = 0
  try {
    if (usesReceiver(scenario)) {
      variables.set('$receiver_url', `${(await context.getInbox()).url}/hooks/${run}`)
    }
    for (let index = 0; index < scenario.steps.length; index++) {
      signal?.throwIfAborted()
      const step = scenario.steps[index]!
      current = index
      stepStarted = performance.now()
      waits.length = 0
      const result: StepReport = { index, name: describeStep(step, index), kind: 'request', method: '', path: '', status: null, error_code: null, duration_ms: 0, ok: true, failures: [] }
      underWay = result
      // A 401 refusing one of the run's keys stops the run: no later scenario can pass with it.
      const noteKeyRefusal = (answer: ClientAnswer, keyName: string, expected: number | undefined) => {
        if (!isKeyRefusal(answer, keyName, expected)) return
        report.key_refused = true
        result.note = describeKeyRefusal(answer, keyName, keyName === 'main' && context.apiKey !== undefined, context.remote === true)
      }
      let failures: StepFailure[] = []
      let jumpTo: number | undefined
      if ('recover' in step) {
        Object.assign(result, { kind: 'recover', method: 'GET', path: '/api/sandbox/state' })
        const answer = await send({ method: 'GET', path: '/api/sandbox/state' }, 'main')
        Object.assign(result, { status: answer.status, error_code: answer.errorCode })
        failures = checkAnswer(answer, { status: 200 })
        // The answer says why (a 400 naming the https:// URL, a storage error): show it, as other steps do.
        if (failures.length > 0) result.received = answer.body ?? answer.text
        if (failures.length > 0) result.note = addInfrastructureNote(result.note, answer)
        if (failures.length > 0) throwIfUnreachable(context.baseUrl, { method: 'GET', path: '/api/sandbox/state' }, answer, 200, context.remote)
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
        const outcome = await waitForWebhook(inbox, `/hooks/${run}`, wait, interpolate(step.expect, variables), signal)
        // The secret the step verifies with, and any an event carries, are masked where they turn up later.
        context.secrets?.collect([wait, outcome.event])
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
          // A value in a path is one segment, escaped as the client library escapes a loan id:
          // the spec does not fix the ids' format, and a "/", "?" or "#" in one changed the URL.
          const { path, ...rest } = step.request
          const spec = { path: interpolate(path, variables, encodePathSegment), ...interpolate(rest, variables) }
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
          result.status = await sendDroppingAnswer(context.baseUrl, keys.get(keyName) ?? null, request, context.transport?.timeoutMs, context.transport?.onAttempt, signal)
          report.requests++
          result.note = result.status === null
            ? 'answer lost on purpose (the server closed the connection before answering)'
            : 'answer dropped on purpose (the connection closed before the body was read)'
        } else {
          const expectation = interpolate(step.expect, variables)
          const { answer, sent } = await sendUntil(() => send(request, keyName), (candidate) => checkAnswer(candidate, expectation).length === 0, untilMs, signal)
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
          if (failures.length > 0) result.note = addInfrastructureNote(result.note, answer, request)
          if (failures.length > 0) throwIfUnreachable(context.baseUrl, request, answer, expectation?.status, context.remote)
        }
      }
      result.failures = failures
      result.ok = failures.length === 0
      result.duration_ms = Math.round((performance.now() - stepStarted) * 100) / 100
      report.steps.push(maskStepSecrets(result, context.secrets))
      underWay = undefined
      context.onStep?.(scenario, result)
      if (!result.ok) {
        report.status = 'failed'
        noteStepsNotRun(report, scenario, index)
        // Said as a connection error is: the run stops here, and the JSON report says why in `error`.
        if (report.key_refused) report.error = `step ${index + 1} (${result.name}): ${result.note}`
        break
      }
      if (jumpTo !== undefined) {
        jumps.push({ from: index, to: jumpTo })
        index = jumpTo - 1
      }
    }
  } catch (error) {
    // Whatever the cut-off step threw (its request aborted, a wait ended), the scenario was stopped.
    signal?.throwIfAborted()
    report.status = 'failed'
    const message = (error instanceof UnknownVariableError && describeSkippedCapture(scenario, error.variable, jumps)) || (error as Error).message
    report.error = context.secrets ? context.secrets.maskText(message) : message
    const unreachable = (error as Error).name === 'SandboxConnectionError'
    // Say where, as a failed expectation does. A server that never answered the run is the
    // problem whatever the step; one that answered earlier steps stopped at this one.
    const answered = context.serverAnswered === true || hasAnsweredStep([report])
    if (current >= 0 && (!unreachable || answered)) report.error = `step ${current + 1} (${describeStep(scenario.steps[current]!, current)}): ${report.error}`
    if (unreachable) report.connection_error = true
    if (current >= 0) noteStepsNotRun(report, scenario, current)
    // The step it stopped at, as every other failed step is reported: in the JSON report's steps,
    // the JUnit step log and a GitHub annotation at its line (a connection error with its retries).
    if (underWay && (unreachable || current >= 0)) {
      underWay.duration_ms = Math.round((performance.now() - stepStarted) * 100) / 100
      const failed = unreachable ? failStepOnConnection(underWay, error as Error, waits, context.transport?.timeoutMs) : failStepOnError(underWay, scenario.steps[current]!, message)
      report.steps.push(maskStepSecrets(failed, context.secrets))
      context.onStep?.(scenario, underWay)
    }
  }
  report.duration_ms = Math.round(performance.now() - started)
  return report
}

/** Counts the steps after the one at INDEX, which a failure there leaves unrun. */
function noteStepsNotRun(report: ScenarioReport, scenario: Scenario, index: number): void {
  const left = scenario.steps.length - index - 1
  if (left > 0) report.steps_not_run = left
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
 * STEP failed by an error of its own making before or after its request (a `{{name}}` with no
 * value, an object put inside a text): the step as written, and the error as its one failure.
 */
function failStepOnError(result: StepReport, step: Scenario['steps'][number], message: string): StepReport {
  if (!result.method && 'request' in step) Object.assign(result, { method: step.request.method, path: step.request.path })
  result.ok = false
  result.failures = [{ field: 'step', expected: undefined, actual: undefined, message }]
  return result
}
