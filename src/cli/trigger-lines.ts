import { SandboxApiError, SandboxConnectionError, SandboxRequestError } from '../client/api-error.js'
import { escapeControls as show } from '../text/escape-controls.js'
import { TriggerUsageError, type TriggerReport } from '../webhook-tools/trigger-event.js'
import { TriggerLoanNotFoundError, TriggerRefusedError, type TriggerRequest } from '../webhook-tools/trigger-walks.js'
import { CliErrorCodes } from '../errors/codes.js'
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
export function toTriggerCliError(error: unknown, where: { baseUrl: string; proxy: string | undefined; local: boolean }): unknown {
  if (error instanceof SandboxConnectionError) {
    const hint = where.proxy ? `; the requests went through the proxy ${where.proxy}: is it up, and can it reach the server?` : '; is the server running? (sandbox serve, or --base-url for another one)'
    return new CliError(`${error.message}${error.certificate || error.proxyRefusal ? '' : hint}`, { code: CliErrorCodes.UNREACHABLE, cause: error })
  }
  if (error instanceof TriggerLoanNotFoundError || error instanceof TriggerUsageError || error instanceof SandboxRequestError) return new CliError(error.message, { cause: error })
  if (error instanceof SandboxApiError || error instanceof TriggerRefusedError) {
    const status = error instanceof SandboxApiError ? error.status : error.request.status
    if (status === 401 || status === 403) {
      const which = where.local ? ': this server takes registered keys only, give one with --api-key (sandbox keys list)' : ''
      return new CliError(`the server refused the key: ${error.message}${which}`, { code: CliErrorCodes.KEY_REFUSED, cause: error })
    }
    const code = error.errorCode
    // The test event needs the key's own endpoint: setup, as a refused key is.
    if (code === 'WEBHOOK_ENDPOINT_REQUIRED') {
      return new CliError(`${error.message} (the test event goes only to the key's endpoint; serve's --webhook-forward-to URL gets every other event type)`, { code: CliErrorCodes.NO_RECEIVER, cause: error })
    }
    const reason = code === 'FLOW_CONFLICT'
      ? '; the key\'s state is in the way (an open application or repayment, or a wallet too low): finish it, or start from a fresh state (sandbox keys reset KEY, or another key)'
      : ''
    return new CliError(`${error.message}${reason}`, { exitCode: 1, code: CliErrorCodes.REFUSED, cause: error })
  }
  return error
}
