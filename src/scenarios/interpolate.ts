import { randomUUID } from 'node:crypto'

const WHOLE = /^\{\{\s*([$A-Za-z_][\w.]*)\s*\}\}$/

/** Whether a value is only a `{{name}}` reference, which stands for the variable's own value and type. */
export const isWholeReference = (value: unknown): boolean => typeof value === 'string' && WHOLE.test(value)
const ANYWHERE = /\{\{\s*([$A-Za-z_][\w.]*)\s*\}\}/g

/** The variable names a text refers to, in order (for checking files before a run). */
export function findReferences(text: string): string[] {
  return [...text.matchAll(ANYWHERE)].map((match) => match[1]!)
}

/**
 * A value as one segment of a path, escaped as the client library escapes a loan id; a lone
 * surrogate (a JSON `"\ud800"`), which encodeURIComponent throws on, becomes U+FFFD.
 */
export const encodePathSegment = (text: string): string => encodeURIComponent(text.replace(/\p{Cs}/gu, '\uFFFD'))

/** Values a scenario can refer to as `{{name}}`: captures plus the runner's built-ins. */
export type Variables = Map<string, unknown>

/** A `{{name}}` with no value when its step ran (the file check lets through only a capture a recover step jumped over). */
export class UnknownVariableError extends Error {
  override name = 'UnknownVariableError'
  constructor(readonly variable: string) {
    super(`unknown variable {{${variable}}} (not captured by an earlier step)`)
  }
}

function lookUp(variables: Variables, name: string): unknown {
  if (name === '$uuid') return randomUUID()
  if (!variables.has(name)) throw new UnknownVariableError(name)
  return variables.get(name)
}

/**
 * Replaces `{{name}}` in every string of `value`. A string that is only a reference keeps the
 * variable's own type, so `"{{amount}}"` can stand for a number. ENCODE escapes what a reference
 * puts inside a longer text (a path's segment).
 */
export function interpolate<T>(value: T, variables: Variables, encode: (text: string) => string = (text) => text): T {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value)
    if (whole) return lookUp(variables, whole[1]!) as T
    return value.replace(ANYWHERE, (_, name: string) => {
      const found = lookUp(variables, name)
      // String() of an object is "[object Object]": a request would go out with that in it.
      if (found !== null && typeof found === 'object' && !Array.isArray(found)) throw new Error(`{{${name}}} holds an object: use it as a whole value ("{{${name}}}"), not inside a text`)
      return encode(String(found))
    }) as T
  }
  if (Array.isArray(value)) return value.map((item) => interpolate(item, variables)) as T
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [interpolate(key, variables), interpolate(item, variables)])) as T
  }
  return value
}
