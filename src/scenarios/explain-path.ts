import { findClosestMatch } from '../text/closest-match.js'
import { parsePath, type Segment } from './json-path.js'
import { show } from './match-value.js'

const LISTED = 10

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

function describeSegment(segment: Segment): string {
  return 'field' in segment ? `[${segment.all ? '?' : ''}${segment.field}=${segment.value}]` : segment.key
}

function listSome(values: readonly string[]): string {
  return values.length > LISTED ? `${values.slice(0, LISTED).join(', ')}, ...` : values.join(', ')
}

/** Why a filter picked nothing: the values its field has in LIST. */
function explainFilter(name: string, list: unknown[], segment: { field: string; value: string }): string {
  if (list.length === 0) return `${name} is empty`
  const values = [...new Set(list.map((item) => (isRecord(item) ? item[segment.field] : undefined)).filter((value) => value !== undefined).map(String))]
  const there = values.length === 0 ? `no element has ${segment.field}` : `${segment.field} there: ${listSome(values)}`
  return `no element of ${name} has ${segment.field}=${segment.value} (${there})`
}

/**
 * Where PATH stops finding anything in BODY, and what is there instead (`activeLoans has 1
 * element, so there is no index 1`), or undefined when it reads a value. A [?field=value] filter
 * that keeps no element counts as stopping there: the check after it failed because of it. For
 * failure reports, whose copy of a long answer is cut before the part the path reads.
 */
export function explainMissingPath(body: unknown, path: string): string | undefined {
  let current = body
  let walked = ''
  for (const segment of parsePath(path)) {
    const name = walked || 'the body'
    if (current === null) return `${name} is null`
    if (typeof current !== 'object') return `${name} is ${show(current)}, not an object or a list`
    if ('field' in segment) {
      if (!Array.isArray(current)) return `${name} is an object, not a list: ${describeSegment(segment)} filters a list`
      const matches = (item: unknown) => isRecord(item) && String(item[segment.field]) === segment.value
      const kept = current.filter(matches)
      if (kept.length === 0) return explainFilter(name, current, segment)
      current = segment.all ? kept : kept[0]
    } else if (Array.isArray(current)) {
      if (!/^-?\d+$/.test(segment.key)) return `${name} is a list: pick an element by index (${name}.0) or by a field (${name}[${segment.key}=...])`
      const index = Number(segment.key)
      if (index >= current.length || index < -current.length) {
        return current.length === 0 ? `${name} is empty` : `${name} has ${current.length} element${current.length === 1 ? '' : 's'}, so there is no index ${index}`
      }
      current = current.at(index)
    } else {
      if (!Object.hasOwn(current, segment.key)) {
        const keys = Object.keys(current)
        const meant = findClosestMatch(segment.key, keys)
        if (meant !== undefined) return `${name} has no ${segment.key} (did you mean ${meant}?)`
        return keys.length === 0 ? `${name} is an empty object` : `${name} has no ${segment.key}; its keys: ${listSome(keys)}`
      }
      current = (current as Record<string, unknown>)[segment.key]
    }
    walked = walked === '' || !('field' in segment) ? [walked, describeSegment(segment)].filter(Boolean).join('.') : `${walked}${describeSegment(segment)}`
  }
  return undefined
}
