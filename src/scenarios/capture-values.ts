import { interpolate, type Variables } from './interpolate.js'
import { explainMissingPath } from './explain-path.js'
import { readPath } from './json-path.js'
import type { StepFailure } from './report-types.js'

/** Stores the values a step captures; a missing value is a failure of that step, saying where its path stops. */
export function capture(spec: Record<string, string> | undefined, body: unknown, variables: Variables): StepFailure[] {
  const failures: StepFailure[] = []
  for (const [name, path] of Object.entries(spec ?? {})) {
    const read = String(interpolate(path, variables))
    const value = readPath(body, read)
    if (value !== undefined) {
      variables.set(name, value)
      continue
    }
    const hint = explainMissingPath(body, read)
    failures.push({ field: `capture.${name}`, expected: `a value at ${path}`, actual: undefined, message: `capture ${name}: nothing at ${path}${hint ? `: ${hint}` : ''}`, ...(hint ? { hint } : {}) })
  }
  return failures
}
