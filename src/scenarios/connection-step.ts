import { describeNetworkError } from '../client/api-error.js'
import type { TransportOptions } from '../client/request-types.js'
import type { ScenarioReport, StepReport } from './report-types.js'

/** One wait for a retry, as the client tells it to `onRetryWait`. */
export type RetryWait = Parameters<NonNullable<TransportOptions['onRetryWait']>>[0]

/** The `field` of the failure a step gets when the server could not be reached during it. */
export const CONNECTION_FAILURE_FIELD = 'connection'

/** A retry's wait as the run tells it: `400 ms`, `2 s` (rounded up, never read as shorter). */
export const formatWait = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.ceil(ms / 1000)} s`)

function describeNetworkOutcome(error: unknown, timeoutMs: number | undefined): string {
  const why = describeNetworkError(error)
  return why === 'timed out' && timeoutMs !== undefined ? `timed out (no answer within ${timeoutMs / 1000} s)` : why
}

function describeWaitReason(wait: RetryWait, timeoutMs: number | undefined): string {
  if (wait.reason === 'rate_limited') return '429 rate limited'
  if (wait.reason === 'gateway_error') return wait.injected ? `${wait.status} injected by serve --faults` : `${wait.status ?? 'gateway error'} from a proxy`
  if (wait.reason === 'in_progress') return '409 IDEMPOTENCY_KEY_IN_PROGRESS'
  return describeNetworkOutcome(wait.error, timeoutMs)
}

/**
 * What each attempt of a request that got no answer ended in, and the waits between them: the
 * lines the terminal printed before each retry, kept for the reports (`<system-out>`, the job
 * summary), which have no other trace of them. Undefined for a single attempt.
 */
export function describeLostAttempts(waits: readonly RetryWait[], lastError: unknown, timeoutMs: number | undefined): string | undefined {
  const outcomes = [...waits.map((wait) => describeWaitReason(wait, timeoutMs)), describeNetworkOutcome(lastError, timeoutMs)]
  if (outcomes.length < 2) return undefined
  const each = outcomes.every((outcome) => outcome === outcomes[0])
    ? `${outcomes[0]} each time`
    : outcomes.map((outcome, i) => `${i + 1}. ${outcome}`).join('; ')
  const times = waits.map((wait) => formatWait(wait.ms))
  const waited = times.length === 1 ? times[0] : `${times.slice(0, -1).join(', ')} and ${times.at(-1)}`
  return `${outcomes.length} attempts, ${each}; waited ${waited} between them`
}

/**
 * STEP as the one the run stopped at because the server could not be reached (ERROR): failed,
 * with the error as its failure and, when no answer came, what each attempt ended in as its note.
 * A step that got an answer (a redirect, a proxy's 502) keeps the note it has.
 */
export function failStepOnConnection(step: StepReport, error: Error, waits: readonly RetryWait[], timeoutMs: number | undefined): StepReport {
  step.ok = false
  step.failures = [{ field: CONNECTION_FAILURE_FIELD, expected: 'an answer from the server', actual: step.status, message: error.message }]
  if (step.status === null) step.note = describeLostAttempts(waits, error.cause, timeoutMs) ?? step.note
  return step
}

/**
 * Whether the server answered any step of SCENARIOS, the one it could not be reached at aside: a
 * server that answered and then did not is no server that never started, and needs other advice.
 */
export function hasAnsweredStep(scenarios: readonly ScenarioReport[]): boolean {
  return scenarios.some((scenario) => scenario.steps.some((step) => step.status !== null && !step.failures.some((failure) => failure.field === CONNECTION_FAILURE_FIELD)))
}
