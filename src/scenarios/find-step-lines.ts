import { findStringEnd } from '../json-text/find-string-end.js'

/**
 * The 1-based line on which each element of a scenario's top-level `steps` array starts, in
 * order, for annotations that point at a step; undefined when the text is not JSON, or has no
 * `steps` array. A byte order mark is no line; CRLF is one line break, as is a lone CR. A scan
 * that knows strings and nesting, so brackets, braces and escaped quotes in strings, and arrays
 * and objects before `steps` (or inside its steps), do not move the count.
 */
export function findStepLines(text: string): number[] | undefined {
  if (text.startsWith('\uFEFF')) text = text.slice(1)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  const steps = (parsed as { steps?: unknown } | null)?.steps
  if (typeof parsed !== 'object' || Array.isArray(parsed) || !Array.isArray(steps)) return undefined

  // The text is valid JSON from here on: only strings, nesting, commas and colons matter.
  let lines: number[] | undefined
  let found: number[] | undefined
  let depth = 0
  let topKey = ''
  let expectsTopKey = false
  let inSteps = false
  let expectsStep = false
  let line = 1
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!
    if (char === '\n' || (char === '\r' && text[i + 1] !== '\n')) {
      line++
      continue
    }
    if (char === ' ' || char === '\t' || char === '\r') continue
    if (expectsStep && char !== ']') lines!.push(line)
    expectsStep = false
    switch (char) {
      case '"': {
        const end = findStringEnd(text, i)
        if (depth === 1 && expectsTopKey) topKey = JSON.parse(text.slice(i, end + 1)) as string
        i = end
        break
      }
      case ':':
        if (depth === 1) expectsTopKey = false
        break
      case ',':
        if (depth === 1) expectsTopKey = true
        else if (depth === 2 && inSteps) expectsStep = true
        break
      case '{':
      case '[':
        depth++
        if (depth === 1) expectsTopKey = true
        // JSON.parse keeps the last of two `steps` keys: so does this.
        else if (depth === 2 && char === '[' && topKey === 'steps') {
          inSteps = true
          expectsStep = true
          lines = []
        }
        break
      case '}':
      case ']':
        if (depth === 2 && inSteps) {
          inSteps = false
          found = lines
        }
        depth--
        break
      // Numbers, true, false and null hold nothing to track.
    }
  }
  return found?.length === steps.length ? found : undefined
}
