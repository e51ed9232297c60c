import { SandboxApiError } from '../client/api-error.js'
import { escapeControls as show } from '../text/escape-controls.js'
import { TriggerUsageError } from '../webhook-tools/trigger-event.js'
import { TriggerLoanNotFoundError, type TriggerRequest } from '../webhook-tools/trigger-walks.js'
import { CliErrorCodes, ConflictReasons } from '../errors/codes.js'
import { toApiCliError, type ApiTarget } from './api-target.js'
import { CliError } from './cli-error.js'
import { chalk, colorStatus } from './output.js'

/** One request of a trigger's walk: method, path and step, status, and the events it sent. */
export function formatTriggerRequest(request: TriggerRequest): string {
  const what = `${request.method} ${show(request.path)}${request.action ? ` ${request.action}` : ''}`
  const events = request.events.length > 0 ? `  → ${request.events.join(', ')}` : ''
  // The status first: paths with a loan id vary in length.
  const ok = request.status >= 200 && request.status < 300
  return ok && request.events.length === 0 ? chalk.dim(`  ${request.status} ${what}`) : `  ${colorStatus(request.status)} ${what}${events}`
}

/** A trigger's failure as the CLI error a user can act on: setup (exit 2) or the API's refusal (exit 1). */
export function toTriggerCliError(error: unknown, target: Pick<ApiTarget, 'baseUrl' | 'proxy' | 'local'>): unknown {
  if (error instanceof TriggerLoanNotFoundError || error instanceof TriggerUsageError) return new CliError(error.message, { cause: error })
  if (error instanceof SandboxApiError && error.errorCode === 'FLOW_CONFLICT') {
    // `keys reset` knows registered keys only: an open-mode key (the local default) cannot be reset.
    const fresh = target.local ? 'another key (--api-key sk_sandbox_ and 16 or more letters, digits or _: any key works here)' : 'sandbox keys reset KEY for a registered key, or another key'
    const reason = error.details?.reason
    const advice = reason === ConflictReasons.INSUFFICIENT_BALANCE
      ? `the key's simulated wallet is too low: for the loan and repayment events, act on an active loan with --loan ID (GET /api/sandbox/loans lists them); or start from a fresh state: ${fresh}`
      : `the key's state is in the way${reason === ConflictReasons.DRAFT_ALREADY_OPEN || reason === ConflictReasons.OPERATION_IN_PROGRESS ? ' (an application or repayment it left open: GET /api/sandbox/loans shows it)' : ''}: finish it, or start from a fresh state: ${fresh}`
    // The API's sentence ends with a period; the advice follows it after a semicolon.
    return new CliError(`${error.message.replace(/\.$/, '')}; ${advice}`, { exitCode: 1, code: CliErrorCodes.REFUSED, cause: error })
  }
  // The test event needs the key's own endpoint: setup, as a refused key is.
  return toApiCliError(error, target, { WEBHOOK_ENDPOINT_REQUIRED: { hint: ' (the test event goes only to the key\'s endpoint; serve\'s --webhook-forward-to URL gets every other event type)', code: CliErrorCodes.NO_RECEIVER } })
}
