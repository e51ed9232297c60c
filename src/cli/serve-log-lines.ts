import { escapeControls } from '../text/escape-controls.js'
import { adviseOnStorageError, createStorageErrorGate } from './storage-error-gate.js'
import { formatJson } from './json-text.js'
import { formatDuration } from './duration-text.js'
import { showBody } from '../text/shown-body.js'
import type * as Output from './output.js'
import type { RequestLogEntry } from '../server/request-log.js'
import type { DeliveryReport } from '../webhooks/delivery-report.js'

/**
 * One request as serve prints it: a text line, or a JSON line with --json-logs. With
 * `--log-bodies` its bodies follow (`>` sent, `<` answered), cut and with webhook secrets masked.
 */
export function printRequest(out: typeof Output, entry: RequestLogEntry, json: boolean): void {
  const { chalk, colorStatus, formatClock } = out
  const { request_body: sent, response_body: answered, ...line } = entry
  const shown = (text: string | undefined) => (text ? showBody(text) : undefined)
  if (json) {
    const bodies = { ...(sent ? { request_body: shown(sent) } : {}), ...(answered === undefined ? {} : { response_body: shown(answered) ?? '' }) }
    process.stdout.write(`${formatJson({ level: 'info', event: 'request', ...line, ...bodies })}\n`)
    return
  }
  const code = entry.error_code ? ` ${chalk.dim(entry.error_code)}` : ''
  const replayed = entry.idempotency_replayed ? ` ${chalk.cyan('replayed')}` : ''
  const fault = entry.fault ? ` ${chalk.yellow(`fault: ${entry.fault}`)}` : ''
  const ignored = entry.ignored_fields ? ` ${chalk.yellow(`ignored: ${escapeControls(out.formatFieldNames(entry.ignored_fields))}`)}` : ''
  process.stdout.write(`${chalk.dim(formatClock(entry.at))} ${entry.method} ${entry.path} ${colorStatus(entry.status)} ${Math.round(entry.duration_ms)}ms ${chalk.dim(entry.request_id)}${code}${replayed}${fault}${ignored}\n`)
  if (sent) process.stdout.write(`${chalk.dim(`  > ${escapeControls(shown(sent)!)}`)}\n`)
  if (answered) process.stdout.write(`${chalk.dim(`  < ${escapeControls(shown(answered)!)}`)}\n`)
}

/** One webhook delivery attempt as serve prints it. */
export function printDelivery(out: typeof Output, report: DeliveryReport, json: boolean): void {
  if (json) {
    process.stdout.write(`${formatJson({ level: report.status === 'failed' ? 'warn' : 'info', event: 'webhook', ...report })}\n`)
    return
  }
  const { chalk } = out
  const result = report.status_code !== null ? out.colorStatus(report.status_code) : chalk.red(report.error ?? 'error')
  const status = report.status === 'delivered' ? chalk.green(report.status) : report.status === 'failed' ? chalk.red(report.status) : chalk.yellow(report.status)
  const next = report.next_attempt_at ? `, next at ${out.formatClock(report.next_attempt_at)}` : ''
  // The delivery id is what `webhook retry` takes; the request_id ends the line as on the
  // request's own line: the request whose change queued it.
  const request = report.request_id ? ` ${chalk.dim(report.request_id)}` : ''
  process.stdout.write(`${chalk.dim(out.formatClock(report.at))} webhook ${report.event_type} -> ${report.url} ${result} ${status} (attempt ${report.attempt}${next}) ${Math.round(report.duration_ms)}ms ${chalk.dim(report.delivery_id)}${request}\n`)
}

/** One sweep of `--forget-idle-keys` that forgot keys: how many, and after how long unused. */
export function printKeysForgotten(out: typeof Output, count: number, idleMs: number, json: boolean): void {
  const idle = formatDuration(idleMs)
  if (json) {
    process.stdout.write(`${formatJson({ level: 'info', event: 'keys_forgotten', count, forget_idle_keys: idle, forget_idle_keys_ms: idleMs })}\n`)
    return
  }
  process.stdout.write(`${out.chalk.dim(out.formatClock(new Date().toISOString()))} keys: forgot ${count} ${count === 1 ? 'key' : 'keys'} unused for more than ${idle} (--forget-idle-keys); ${count === 1 ? 'its' : 'their'} next request starts empty\n`)
}

/**
 * Errors the server logs while it runs. A storage failure is told in one line: its message says
 * what failed and what to do; while a backend is down, when `gate` is given, one line per 30 s
 * says how many more failed (storage-error-gate.ts).
 */
export function printError(error: unknown, json: boolean, gate?: ReturnType<typeof createStorageErrorGate>): void {
  // A setup problem while running (a broken keys file) is the operator's to fix, not a crash.
  if ((error as Error | undefined)?.name === 'SetupError') {
    const message = (error as Error).message
    if (json) process.stdout.write(`${formatJson({ level: 'warn', event: 'setup_warning', message })}\n`)
    else process.stderr.write(`warning: ${message}\n`)
    return
  }
  const storage = (error as Error | undefined)?.name === 'StorageError'
  let message = error instanceof Error ? error.message : String(error)
  let more = 0
  if (storage) {
    const line = gate ? gate(message) : { message, more: 0 }
    if (!line) return
    const advice = adviseOnStorageError(message)
    message = advice ? `${message} (${advice})` : message
    more = line.more
  }
  if (json) {
    const stack = !storage && error instanceof Error ? error.stack : undefined
    process.stdout.write(`${formatJson({ level: 'error', event: storage ? 'storage_error' : 'error', message, ...(more ? { more_errors: more } : {}), ...(stack ? { stack } : {}) })}\n`)
  } else if (storage) process.stderr.write(`storage error: ${message}${more ? `; ${more} more storage errors since the last line` : ''}\n`)
  else console.error(error)
}
