import { isDeepStrictEqual } from 'node:util'

/**
 * The operators a scenario can use instead of a literal value, e.g. `{ "$type": "string" }` or
 * `{ "$gte": 1, "$lt": 5 }`. Several in one object must all hold.
 */
const OPERATORS: Record<string, (actual: unknown, operand: any) => boolean> = { // eslint-disable-line @typescript-eslint/no-explicit-any
  $exists: (actual, operand: boolean) => (actual !== undefined) === operand,
  $type: (actual, operand: string) => typeOf(actual) === operand,
  $match: (actual, operand: string) => typeof actual === 'string' && new RegExp(operand).test(actual),
  $ne: (actual, operand) => !isDeepStrictEqual(actual, operand),
  $oneOf: (actual, operand: unknown[]) => operand.some((option) => isDeepStrictEqual(actual, option)),
  $length: (actual, operand: number) => (Array.isArray(actual) || typeof actual === 'string') && actual.length === operand,
  $contains: (actual, operand) =>
    Array.isArray(actual) ? actual.some((item) => isDeepStrictEqual(item, operand)) : typeof actual === 'string' && actual.includes(String(operand)),
  $gt: (actual, operand: number) => typeof actual === 'number' && actual > operand,
  $gte: (actual, operand: number) => typeof actual === 'number' && actual >= operand,
  $lt: (actual, operand: number) => typeof actual === 'number' && actual < operand,
  $lte: (actual, operand: number) => typeof actual === 'number' && actual <= operand,
}

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

/** Names of operators a matcher uses that do not exist (a mistake in the scenario file). */
export function unknownOperators(expected: Record<string, unknown>): string[] {
  return Object.keys(expected).filter((key) => !(key in OPERATORS))
}

/** Checks `actual` against a literal or a matcher; answers null when it holds, else why not. */
export function matchValue(actual: unknown, expected: unknown): string | null {
  if (!isMatcher(expected)) {
    return isDeepStrictEqual(actual, expected) ? null : `expected ${show(expected)}, got ${show(actual)}`
  }
  for (const [operator, operand] of Object.entries(expected)) {
    const check = OPERATORS[operator]
    if (!check) return `unknown matcher ${operator}`
    if (!check(actual, operand)) return `expected ${operator} ${show(operand)}, got ${show(actual)}`
  }
  return null
}

/** A short one-line rendering of a value for reports. */
export function show(value: unknown): string {
  if (value === undefined) return '(missing)'
  const text = JSON.stringify(value)
  return text.length > 200 ? `${text.slice(0, 197)}...` : text
}
