import { SandboxApiError } from '../client/api-error.js'
import { escapeControls as show } from '../text/escape-controls.js'
import { TriggerUsageError, type TriggerReport } from '../webhook-tools/trigger-event.js'
import { TriggerLoanNotFoundError, type TriggerRequest } from '../webhook-tools/trigger-walks.js'
import { CliErrorCodes } from '../errors/codes.js'
import { toApiCliError, type ApiTarget } from './api-target.js'
import { CliError } from './cli-error.js'
import { chalk, colorStatus, formatClock, formatCount } from './output.js'

/** One request of a trigger's walk: method, path and step, status, and the events it sent. */
export function formatTriggerRequest(request: TriggerRequest): string {
  const what = `${request.method} ${show(request.path)}${request.action ? ` ${request.action}` : ''}`
  const events = request.events.length > 0 ? `  → ${request.events.join(', ')}` : ''
  // The status first: paths with a loan id vary in length.
  const ok = request.status >= 200 && request.status < 300
  return ok && request.events.length === 0 ? chalk.dim(`  ${request.status} ${what}`) : `  ${colorStatus(request.status)} ${what}${events}`
}

type Delivery = TriggerReport['deliveries'][number]

function describeDelivery(delivery: Delivery): string {
  const attempts = formatCount(delivery.attempts, 'attempt')
  const last = delivery.last_status_code ?? (delivery.last_error ? show(delivery.last_error) : null)
  const detail = [last, attempts, delivery.status === 'retrying' && delivery.next_attempt_at ? `next at ${formatClock(delivery.next_attempt_at)}` : null].filter(Boolean).join(', ')
  if (delivery.status === 'delivered') return `${chalk.green('✓')} delivered ${chalk.dim(`(${detail})`)}`
  if (delivery.status === 'pending') return `${chalk.dim('…')} pending`
  return `${chalk.red('✗')} ${delivery.status === 'failed' ? chalk.red('failed') : chalk.yellow('retrying')} (${detail})`
}

/** The deliveries the walk queued, each with its target and state, as the log showed them last. */
export function formatTriggerDeliveries(report: TriggerReport): string[] {
  if (report.deliveries.length === 0) return []
  const lines = [report.waited_ms === null ? 'deliveries queued:' : `deliveries after ${(report.waited_ms / 1000).toFixed(1)} s:`]
  for (const delivery of report.deliveries) {
    // A hosted server's log may show neither target nor URL.
    const to = [delivery.target, delivery.url && show(delivery.url)].filter(Boolean).join(' ')
    lines.push(`  ${delivery.event_type.padEnd(33)} ${chalk.dim(delivery.event_id)}  ${to ? `${to}  ` : ''}${describeDelivery(delivery)}`)
  }
  if (report.waited_ms === null && report.deliveries.some((delivery) => delivery.status === 'pending')) {
    lines.push(chalk.dim('  (--wait waits for their outcome; GET /api/sandbox/webhooks shows it later)'))
  }
  return lines
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
