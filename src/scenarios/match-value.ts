import { isDeepStrictEqual } from 'node:util'
import { suggestClosest } from '../text/closest-match.js'

/**
 * The operators a scenario can use instead of a literal value, e.g. `{ "$type": "string" }` or
 * `{ "$gte": 1, "$lt": 5 }`. Several in one object must all hold.
 */
const OPERATORS: Record<string, (actual: unknown, operand: any) => boolean> = { // eslint-disable-line @typescript-eslint/no-explicit-any
  $exists: (actual, operand: boolean) => (actual !== undefined) === operand,
  $type: (actual, operand: string) => typeOf(actual) === operand,
  $match: (actual, operand: string | number) => typeof actual === 'string' && new RegExp(String(operand)).test(actual),
  // A missing value is not "not equal": a typo in the path must fail, as with every other matcher.
  $ne: (actual, operand) => actual !== undefined && !isDeepStrictEqual(actual, operand),
  $oneOf: (actual, operand: unknown[]) => operand.some((option) => isDeepStrictEqual(actual, option)),
  $length: (actual, operand: number) => (Array.isArray(actual) || typeof actual === 'string') && actual.length === operand,
  $contains: (actual, operand) =>
    Array.isArray(actual) ? actual.some((item) => isDeepStrictEqual(item, operand)) : typeof actual === 'string' && actual.includes(String(operand)),
  $gt: (actual, operand: number) => typeof actual === 'number' && actual > operand,
  $gte: (actual, operand: number) => typeof actual === 'number' && actual >= operand,
  $lt: (actual, operand: number) => typeof actual === 'number' && actual < operand,
  $lte: (actual, operand: number) => typeof actual === 'number' && actual <= operand,
}

// 'undefined' is a missing value, as `$exists: false` says it.
const TYPE_NAMES = ['string', 'number', 'boolean', 'null', 'array', 'object', 'undefined']
const isNumber = (operand: unknown) => (typeof operand === 'number' && Number.isFinite(operand) ? null : 'needs a number')

/** What each operator's operand must be; null when it fits. Checked when a file is loaded. */
const OPERAND_RULES: Record<string, (operand: unknown) => string | null> = {
  $exists: (operand) => (typeof operand === 'boolean' ? null : 'needs true or false'),
  $type: (operand) => (typeof operand === 'string' && TYPE_NAMES.includes(operand) ? null : `needs one of ${TYPE_NAMES.join(', ')}`),
  $match: (operand) => {
    // A number is its digits: a captured id number can be looked for in a text.
    if (typeof operand !== 'string' && typeof operand !== 'number') return 'needs a regular expression as a string'
    try {
      new RegExp(String(operand))
      return null
    } catch (error) {
      return `needs a valid regular expression (${(error as Error).message})`
    }
  },
  $ne: () => null,
  $oneOf: (operand) => (Array.isArray(operand) ? null : 'needs an array of the values allowed'),
  $length: (operand) => (Number.isInteger(operand) && (operand as number) >= 0 ? null : 'needs a whole number from 0'),
  $contains: () => null,
  $gt: isNumber,
  $gte: isNumber,
  $lt: isNumber,
  $lte: isNumber,
}

/** The matcher names, `$exists` to `$lte`. */
export const MATCHER_NAMES: readonly string[] = Object.keys(OPERAND_RULES)

function typeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

/** True when `expected` is an operator object rather than a literal to compare with. */
export function isMatcher(expected: unknown): expected is Record<string, unknown> {
  if (!expected || typeof expected !== 'object' || Array.isArray(expected)) return false
  const keys = Object.keys(expected)
  return keys.length > 0 && keys.every((key) => key.startsWith('$'))
}

/**
 * What is wrong with a matcher: operators that do not exist, operands they cannot take. An
 * operand for `skip` (a `{{name}}` not yet known when the file is loaded) is checked when it runs.
 */
export function findMatcherProblems(expected: Record<string, unknown>, skip: (operand: unknown) => boolean = () => false): string[] {
  return Object.entries(expected).map(([operator, operand]) => {
    const rule = OPERAND_RULES[operator]
    if (!rule) return `unknown matcher ${operator}${suggestClosest(operator, MATCHER_NAMES)}`
    const problem = skip(operand) ? null : rule(operand)
    return problem && `${operator} ${problem}, got ${show(operand)}`
  }).filter((problem): problem is string => Boolean(problem))
}

/** Checks `actual` against a literal or a matcher; answers null when it holds, else why not. */
export function matchValue(actual: unknown, expected: unknown): string | null {
  if (!isMatcher(expected)) {
    return isDeepStrictEqual(actual, expected) ? null : `expected ${show(expected)}, got ${show(actual)}`
  }
  // Operands that came from variables are only known now.
  const [problem] = findMatcherProblems(expected)
  if (problem) return problem
  for (const [operator, operand] of Object.entries(expected)) {
    if (!OPERATORS[operator]!(actual, operand)) return `expected ${operator} ${show(operand)}, got ${show(actual)}`
  }
  return null
}

/** A short one-line rendering of a value for reports. */
export function show(value: unknown): string {
  if (value === undefined) return '(missing)'
  const text = JSON.stringify(value)
  return text.length > 200 ? `${text.slice(0, 197)}...` : text
}
