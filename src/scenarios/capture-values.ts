import { interpolate, type Variables } from './interpolate.js'
import { readPath } from './json-path.js'
import type { StepFailure } from './report-types.js'

/** Stores the values a step captures; a missing value is a failure of that step. */
export function capture(spec: Record<string, string> | undefined, body: unknown, variables: Variables): StepFailure[] {
  const failures: StepFailure[] = []
  for (const [name, path] of Object.entries(spec ?? {})) {
    const value = readPath(body, String(interpolate(path, variables)))
    if (value === undefined) failures.push({ field: `capture.${name}`, expected: `a value at ${path}`, actual: undefined, message: `capture ${name}: nothing at ${path}` })
    else variables.set(name, value)
  }
  return failures
}
