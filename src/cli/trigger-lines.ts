import { SandboxApiError } from '../client/api-error.js'
import { escapeControls as show } from '../text/escape-controls.js'
import { TriggerUsageError } from '../webhook-tools/trigger-event.js'
import { TriggerLoanNotFoundError, type TriggerRequest } from '../webhook-tools/trigger-walks.js'
import { CliErrorCodes } from '../errors/codes.js'
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
export function toTriggerCliError(error: unknown, target: Pick<ApiTarget, 'proxy' | 'local'>): unknown {
  if (error instanceof TriggerLoanNotFoundError || error instanceof TriggerUsageError) return new CliError(error.message, { cause: error })
  // The test event needs the key's own endpoint: setup, as a refused key is.
  if (error instanceof SandboxApiError && error.errorCode === 'WEBHOOK_ENDPOINT_REQUIRED') {
    return new CliError(`${error.message} (the test event goes only to the key's endpoint; serve's --webhook-forward-to URL gets every other event type)`, { code: CliErrorCodes.NO_RECEIVER, cause: error })
  }
  if (error instanceof SandboxApiError && error.errorCode === 'FLOW_CONFLICT') {
    const advice = '; the key\'s state is in the way (an open application or repayment, or a wallet too low): finish it, or start from a fresh state (sandbox keys reset KEY, or another key)'
    return new CliError(`${error.message}${advice}`, { exitCode: 1, code: CliErrorCodes.REFUSED, cause: error })
  }
  return toApiCliError(error, target)
}
