import type { ClientAnswer } from '../client/request-types.js'
import { explainMissingPath } from './explain-path.js'
import { readPath } from './json-path.js'
import { isMatcher, matchValue, show } from './match-value.js'
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
    compare(failures, `header ${name.toLowerCase()}`, readHeaderValue(answer.headers.get(name) ?? undefined, expected), expected)
  }
  return failures
}

const COMPARISONS = ['$gt', '$gte', '$lt', '$lte']
const DECIMAL = /^-?\d+(?:\.\d+)?$/

/**
 * A header's value as EXPECTED compares it: a header is text, so `"ratelimit-remaining": {"$gt": 0}`
 * or `"ratelimit-limit": 120` could never hold. Against a number, or a matcher of only $gt, $gte,
 * $lt, $lte (and $exists), a value that is a decimal number is that number; otherwise the text.
 */
export function readHeaderValue(value: string | undefined, expected: unknown): string | number | undefined {
  if (value === undefined || !DECIMAL.test(value.trim())) return value
  const operators = isMatcher(expected) ? Object.keys(expected) : []
  const numeric = typeof expected === 'number' || (operators.some((key) => COMPARISONS.includes(key)) && operators.every((key) => COMPARISONS.includes(key) || key === '$exists'))
  return numeric ? Number(value.trim()) : value
}

/** Checks values at body paths; adds to `failures`, saying where a path that found nothing stops. */
export function checkBody(failures: StepFailure[], body: unknown, expected: Record<string, unknown> = {}): void {
  for (const [path, value] of Object.entries(expected)) {
    const before = failures.length
    compare(failures, `body.${path}`, readPath(body, path), value)
    const failure = failures[before]
    const hint = failure && explainMissingPath(body, path)
    if (failure && hint) Object.assign(failure, { hint, message: `${failure.message}: ${hint}` })
  }
}

/** A multi-line, diff-like rendering of a step's failures for the terminal. */
export function describeFailures(failures: StepFailure[]): string[] {
  return failures.flatMap((failure) =>
    failure.field.startsWith('body.') || failure.field === 'status' || failure.field === 'error_code' || failure.field.startsWith('header')
      ? [`${failure.field}`, `  - expected ${show(failure.expected)}`, `  + received ${show(failure.actual)}${failure.hint ? `: ${failure.hint}` : ''}`]
      : [failure.message],
  )
}
