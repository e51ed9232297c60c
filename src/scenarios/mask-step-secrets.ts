import { maskSecrets, maskSecretValues, SECRET_FIELDS } from '../text/shown-body.js'
import type { StepReport } from './report-types.js'

/**
 * The step with every webhook signing secret in what it sent, received and failed on masked, as
 * `--verbose` masks them: a failed step's answer goes to the terminal, the JSON and JUnit reports
 * and a GitHub job summary, all of which CI keeps where more people read them than should sign
 * deliveries.
 */
export function maskStepSecrets(step: StepReport): StepReport {
  if (step.sent?.body !== undefined) step.sent = { ...step.sent, body: maskSecretValues(step.sent.body) }
  if (typeof step.received === 'string') step.received = maskSecrets(step.received)
  else if (step.received !== undefined) step.received = maskSecretValues(step.received)
  step.failures = step.failures.map((failure) => {
    const field = failure.field.split('.').at(-1)
    return { ...failure, expected: maskSecretValues(failure.expected, field), actual: maskSecretValues(failure.actual, field), message: maskFailureMessage(failure.message, failure.actual, field) }
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
