/**
 * Paths into JSON answers, as scenarios write them: `a.b.0.c`, negative indexes from the end
 * (`items.-1`), and filters that pick the first array element with a field equal to a value
 * (`loanApplications[id=app_1].loan_id`).
 */
type Segment = { key: string } | { field: string; value: string }

const SEGMENT = /([^.[\]]+)|\[([^=\]]+)=([^\]]*)\]/g

/** Splits a path into its segments; throws on an empty path. */
export function parsePath(path: string): Segment[] {
  const segments: Segment[] = []
  for (const match of path.matchAll(SEGMENT)) {
    if (match[1] !== undefined) segments.push({ key: match[1] })
    else segments.push({ field: match[2]!, value: match[3]! })
  }
  if (segments.length === 0) throw new Error(`empty path "${path}"`)
  return segments
}

/** The value at `path`, or undefined when any segment is missing. */
export function readPath(value: unknown, path: string): unknown {
  let current: unknown = value
  for (const segment of parsePath(path)) {
    if (current === null || typeof current !== 'object') return undefined
    if ('field' in segment) {
      if (!Array.isArray(current)) return undefined
      current = current.find((item) => item && typeof item === 'object' && String((item as Record<string, unknown>)[segment.field]) === segment.value)
    } else if (Array.isArray(current) && /^-?\d+$/.test(segment.key)) {
      current = current.at(Number(segment.key))
    } else {
      current = Object.hasOwn(current, segment.key) ? (current as Record<string, unknown>)[segment.key] : undefined
    }
  }
  return current
}
