/** A lone UTF-16 surrogate: in a `u` regex a whole pair is one code point and does not match. */
const LONE_SURROGATE = /\p{Surrogate}/u

/** A JSON escape of a surrogate (`\ud83d`), the only way one can reach a body that decoded as UTF-8. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/

/**
 * Where a parsed JSON body holds half of a character (a `\ud83d` escape without its pair, as a
 * string cut inside an emoji leaves): `name`, `events[1]`, or the object holding a field name
 * that has one (`body` at the top). Such a string was stored, then echoed in GET state and in
 * signed events, which strict JSON parsers (jq, Rust's serde_json) refuse whole. Undefined when
 * there is none; `raw` is the body's text, scanned first so that most bodies are never walked.
 */
export function findHalfCharacter(raw: string, value: unknown): string | undefined {
  return SURROGATE_ESCAPE.test(raw) ? walk(value, '') : undefined
}

function walk(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path || 'body' : undefined
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = walk(item, `${path}[${index}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (value === null || typeof value !== 'object') return undefined
  for (const [key, item] of Object.entries(value)) {
    if (LONE_SURROGATE.test(key)) return path || 'body'
    const found = walk(item, path ? `${path}.${key}` : key)
    if (found !== undefined) return found
  }
  return undefined
}
