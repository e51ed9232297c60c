import { maskSecrets, maskSecretValues, SECRET_FIELDS } from '../text/shown-body.js'
import type { StepReport } from './report-types.js'
import type { SeenSecrets } from './seen-secrets.js'

/**
 * The step with every webhook signing secret in what it sent, received, failed on and noted
 * masked, as `--verbose` masks them: a failed step's answer goes to the terminal, the JSON and
 * JUnit reports and a GitHub job summary, all of which CI keeps where more people read them than
 * should sign deliveries. Secret fields are masked by name; with SEEN, every secret the run has
 * met is masked by value too, wherever a variable carried it.
 */
export function maskStepSecrets(step: StepReport, seen?: SeenSecrets): StepReport {
  const byValue = <T>(value: T): T => (seen ? seen.maskValue(value) : value)
  if (step.sent?.body !== undefined) step.sent = { ...step.sent, body: byValue(maskSecretValues(step.sent.body)) }
  if (typeof step.received === 'string') step.received = byValue(maskSecrets(step.received))
  else if (step.received !== undefined) step.received = byValue(maskSecretValues(step.received))
  step.path = byValue(step.path)
  if (step.note !== undefined) step.note = byValue(step.note)
  step.failures = step.failures.map((failure) => {
    const field = failure.field.split('.').at(-1)
    return {
      ...failure,
      expected: byValue(maskSecretValues(failure.expected, field)),
      actual: byValue(maskSecretValues(failure.actual, field)),
      message: byValue(maskFailureMessage(failure.message, failure.actual, field)),
      ...(failure.hint === undefined ? {} : { hint: byValue(maskFailureMessage(failure.hint, failure.actual, field)) }),
    }
  })
  return step
}

/** A failure's one-line message, which quotes the value it got: an object holding a secret, or a secret field's own. */
function maskFailureMessage(message: string, actual: unknown, field: string | undefined): string {
  const masked = maskSecrets(message)
  // A value too short to be a secret could be any word of the message: left as it is.
  if (typeof actual !== 'string' || field === undefined || !SECRET_FIELDS.has(field) || actual.length < 8) return masked
  return masked.split(actual).join(maskSecretValues(actual, field) as string)
}
