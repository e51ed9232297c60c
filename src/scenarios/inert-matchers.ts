import { findClosestMatch } from '../text/closest-match.js'
import { isMatcher, MATCHER_NAMES } from './match-value.js'

type Segments = (string | number)[]

const compact = (value: unknown) => JSON.stringify(value)

/** `"lt": did you mean $lt?` for a plain key one typo (the $ left out, say) from a matcher's name. */
function describePlainKey(key: string): string {
  const meant = MATCHER_NAMES.includes(`$${key}`) ? `$${key}` : findClosestMatch(`$${key}`, MATCHER_NAMES)
  return meant === undefined ? `"${key}"` : `"${key}": did you mean ${meant}?`
}

/** Objects below an expected value, with where they are in it. */
function visitObjects(value: unknown, at: Segments, onObject: (object: Record<string, unknown>, at: Segments) => void): void {
  if (Array.isArray(value)) value.forEach((item, i) => visitObjects(item, [...at, i], onObject))
  else if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>
    onObject(object, at)
    // A matcher's operand is data ($oneOf's list, $contains's element), not more expectations.
    if (!isMatcher(object)) for (const [key, item] of Object.entries(object)) visitObjects(item, [...at, key], onObject)
  }
}

/**
 * Matchers the runner would not apply in the value expected at PATH (a body path or a header):
 * one inside an object or array, or $-keys mixed with plain ones. Either is compared as a literal
 * and never holds, and its diff reads as if the matcher had failed on the value received.
 */
export function findInertMatchers(path: string, expected: unknown): string[] {
  const problems: string[] = []
  visitObjects(expected, [], (object, at) => {
    const keys = Object.keys(object)
    const where = at.length === 0 ? '' : ` at ${at.join('.')}`
    if (at.length > 0 && isMatcher(object)) {
      problems.push(`${compact(object)}${where} is a matcher inside a value, which is compared as written and never holds: give it a path of its own, "${[path, ...at].join('.')}": ${compact(object)}`)
    } else if (keys.some((key) => key.startsWith('$')) && !isMatcher(object)) {
      const plain = keys.filter((key) => !key.startsWith('$')).map(describePlainKey).join(', ')
      problems.push(`${compact(object)}${where} mixes matchers with other keys (${plain}), so it is compared as a value and never holds: every key of a matcher starts with $`)
    }
  })
  return problems
}
