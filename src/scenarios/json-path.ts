/**
 * Paths into JSON answers, as scenarios write them: `a.b.0.c` (or `a.b[0].c`), negative indexes
 * from the end (`items.-1`), filters that pick the first array element with a field equal to a value
 * (`loanApplications[id=app_1].loan_id`), and filters that keep every such element
 * (`deliveries[?target=endpoint].0.status`).
 */
/** One step of a path: a key or index, or a filter on a list. */
export type Segment = { key: string } | { field: string; value: string; all: boolean }

const SEGMENT = /([^.[\]]+)|\[(-?\d+)\]|\[(\?)?([^=\]?]+)=([^\]]*)\]/g

/** Splits a path into its segments; throws on an empty path or one it cannot read whole. */
export function parsePath(path: string): Segment[] {
  const segments: Segment[] = []
  let end = 0
  for (const match of path.matchAll(SEGMENT)) {
    // A key follows a dot (or starts the path); a bracket may follow one: anything else is a typo.
    const gap = path.slice(end, match.index)
    const joined = end === 0 ? gap === '' : match[1] === undefined ? gap === '' || gap === '.' : gap === '.'
    if (!joined) throw new Error(`cannot read the path "${path}" at "${path.slice(end)}"`)
    end = match.index + match[0].length
    const key = match[1] ?? match[2]
    if (key !== undefined) segments.push({ key })
    else segments.push({ field: match[4]!, value: match[5]!, all: match[3] === '?' })
  }
  if (segments.length === 0) throw new Error(`empty path "${path}"`)
  if (end < path.length) throw new Error(`cannot read the path "${path}" at "${path.slice(end)}"`)
  return segments
}

/** The value at `path`, or undefined when any segment is missing. */
export function readPath(value: unknown, path: string): unknown {
  let current: unknown = value
  for (const segment of parsePath(path)) {
    if (current === null || typeof current !== 'object') return undefined
    if ('field' in segment) {
      if (!Array.isArray(current)) return undefined
      const matches = (item: unknown) => item !== null && typeof item === 'object' && String((item as Record<string, unknown>)[segment.field]) === segment.value
      current = segment.all ? current.filter(matches) : current.find(matches)
    } else if (Array.isArray(current) && /^-?\d+$/.test(segment.key)) {
      current = current.at(Number(segment.key))
    } else {
      current = Object.hasOwn(current, segment.key) ? (current as Record<string, unknown>)[segment.key] : undefined
    }
  }
  return current
}
