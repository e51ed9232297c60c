import type { ClientAnswer } from '../client/request-types.js'
import { readPath } from './json-path.js'
import { matchValue, show } from './match-value.js'
import type { StepFailure } from './report-types.js'
import type { Expectation } from './scenario-schema.js'

function compare(failures: StepFailure[], field: string, actual: unknown, expected: unknown): void {
  const problem = matchValue(actual, expected)
  if (problem) failures.push({ field, expected, actual, message: `${field}: ${problem}` })
}

/**
 * Checks an answer against a step's `expect`. Without an expected status, a step expects 2xx
 * unless it names an error_code, so a scenario never passes over an error it did not ask for.
 */
export function checkAnswer(answer: Pick<ClientAnswer, 'status' | 'errorCode' | 'body' | 'headers'>, expectation: Expectation = {}): StepFailure[] {
  const failures: StepFailure[] = []
  if (expectation.status !== undefined) compare(failures, 'status', answer.status, expectation.status)
  else if (!expectation.error_code && (answer.status < 200 || answer.status > 299)) {
    failures.push({ field: 'status', expected: '2xx', actual: answer.status, message: `status: expected 2xx, got ${answer.status}${answer.errorCode ? ` ${answer.errorCode}` : ''}` })
  }
  if (expectation.error_code !== undefined) compare(failures, 'error_code', answer.errorCode, expectation.error_code)
  checkBody(failures, answer.body, expectation.body)
  for (const [name, expected] of Object.entries(expectation.headers ?? {})) {
    compare(failures, `header ${name.toLowerCase()}`, answer.headers.get(name) ?? undefined, expected)
  }
  return failures
}

/** Checks values at body paths; adds to `failures`. */
export function checkBody(failures: StepFailure[], body: unknown, expected: Record<string, unknown> = {}): void {
  for (const [path, value] of Object.entries(expected)) compare(failures, `body.${path}`, readPath(body, path), value)
}

/** A multi-line, diff-like rendering of a step's failures for the terminal. */
export function describeFailures(failures: StepFailure[]): string[] {
  return failures.flatMap((failure) =>
    failure.field.startsWith('body.') || failure.field === 'status' || failure.field === 'error_code' || failure.field.startsWith('header')
      ? [`${failure.field}`, `  - expected ${show(failure.expected)}`, `  + received ${show(failure.actual)}`]
      : [failure.message],
  )
}
