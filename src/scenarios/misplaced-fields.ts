/**
 * The fields of a request, of an expectation, and of the step around them. Not `headers`: one
 * written beside a request's method may be a header to send, which a request cannot carry.
 */
const REQUEST_FIELDS = ['method', 'path', 'key', 'idempotency_key', 'drop_answer', 'until_ms']
const EXPECT_FIELDS = ['status', 'error_code']
const STEP_FIELDS = ['expect', 'capture', 'name', 'request']

/** Where KEY belongs, written inside PARENT (a step, its request or its expect); undefined if nowhere else. */
function findPlace(key: string, parent: 'step' | 'request' | 'expect'): string | undefined {
  if (parent === 'step') {
    if (key === 'body') return 'in request to send it, or in expect to check the answer\'s'
    if (REQUEST_FIELDS.includes(key)) return 'in request'
    if (EXPECT_FIELDS.includes(key)) return 'in expect'
  }
  if (parent === 'request') {
    if (STEP_FIELDS.includes(key)) return 'in the step, beside request'
    if (EXPECT_FIELDS.includes(key)) return 'in expect, beside request'
  }
  if (parent === 'expect') {
    if (STEP_FIELDS.includes(key)) return 'in the step, beside expect'
    if (REQUEST_FIELDS.includes(key)) return 'in request'
  }
  return undefined
}

/**
 * ` (status goes in expect; method goes in request)` after zod's `Unrecognized keys` for fields
 * a step takes one level up or down (PATH is the within the step): the field exists, so
 * "unrecognized" alone reads as a typo where there is none. Nothing when no key is such a field.
 */
export function describeMisplacedFields(keys: string[], path: PropertyKey[]): string {
  const parent = path.length === 0 ? 'step' : path.length === 1 && (path[0] === 'request' || path[0] === 'expect') ? path[0] : undefined
  if (!parent) return ''
  const byPlace = new Map<string, string[]>()
  for (const key of keys) {
    const place = findPlace(key, parent)
    if (place) byPlace.set(place, [...(byPlace.get(place) ?? []), key])
  }
  const parts = [...byPlace].map(([place, names]) => `${names.join(' and ')} go${names.length === 1 ? 'es' : ''} ${place}`)
  return parts.length === 0 ? '' : ` (${parts.join('; ')})`
}
