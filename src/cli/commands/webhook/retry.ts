import type { Command } from 'commander'
import { CliError, keepExitCodeWhenStdoutCloses, printErrorsAsJson, printJsonDocument } from '../../cli-error.js'
import { addApiTargetOptions, addDeliveryWaitOption, addJsonOption, readDeliveryWait } from '../../options.js'
import { CliErrorCodes } from '../../../errors/codes.js'
import type { ApiTargetFlags } from '../../api-target.js'
import { escapeControls } from '../../../text/escape-controls.js'

interface RetryFlags extends ApiTargetFlags {
  wait?: string | true
  json?: boolean
}

/** The retry endpoint's limit on one request (its `delivery_ids`). */
const MAX_IDS = 50

async function runRetry(ids: string[], flags: RetryFlags, command: Command): Promise<void> {
  const waitMs = readDeliveryWait(flags.wait)
  // The server's 400 for these read as the API refusing (exit 1), when the arguments are wrong.
  if (ids.length > MAX_IDS) throw new CliError(`at most ${MAX_IDS} delivery ids at a time (the retry endpoint's limit), got ${ids.length}: retry them in batches of ${MAX_IDS}`)
  if (ids.includes('')) throw new CliError('a delivery id is an empty string (an unset shell variable?); give whd_... ids, as sandbox webhook deliveries lists them')
  const { chalk } = await import('../../output.js')
  const write = (line: string) => process.stdout.write(`${line}\n`)
  const { resolveApiTarget, toApiCliError } = await import('../../api-target.js')
  const target = await resolveApiTarget(flags, { json: flags.json })
  const { retryDeliveries, findUnseenRetries } = await import('../../../webhook-tools/retry-deliveries.js')
  const report = await retryDeliveries({ ...target.transport, deliveryIds: ids, waitMs }).catch((error: unknown) => {
    // An id the log does not hold (or one delivered already) is a wrong argument.
    throw toApiCliError(error, target, { WEBHOOK_DELIVERY_NOT_FOUND: { hint: ' (sandbox webhook deliveries lists them)' } })
  })
  if (flags.json) printJsonDocument(command, report, 2)
  else if (report.retried.length === 0) write('no failed delivery to retry')
  else {
    const { formatDeliveries } = await import('../../delivery-lines.js')
    const heading = `retried ${report.retried.length === 1 ? '1 delivery' : `${report.retried.length} deliveries`}`
    const shown = formatDeliveries(report.deliveries, report.waited_ms, heading)
    for (const line of shown.length > 0 ? shown : [`${heading}:`]) write(line)
    const unseen = findUnseenRetries(report.retried, report.deliveries)
    if (unseen.length > 0) write(chalk.dim(`  older than the 50 newest deliveries the log shows: ${escapeControls(unseen.join(' '))}`))
  }
  // A receiver back after an outage: its deliveries are often still retrying, not failed yet.
  const retrying = report.still_retrying
  // The ids are the server's text: escaped, as delivery-lines.ts escapes the rest.
  if (!flags.json && retrying.length > 0) {
    write(chalk.dim(`${retrying.length === 1 ? '1 delivery is' : `${retrying.length} deliveries are`} still retrying on the schedule (without ids, only failed ones are put back); to send ${retrying.length === 1 ? 'it' : 'them'} now: sandbox webhook retry ${escapeControls(retrying.slice(0, 50).join(' '))}`))
  }
  if (report.problem) throw new CliError(report.problem, { exitCode: 1, code: CliErrorCodes.FAILED })
}

/** `sandbox webhook retry`: the retry endpoint from the command line, optionally waiting for the outcome. */
export function registerWebhookRetry(group: Command): void {
  const command = group
    .command('retry')
    .description('send failed webhook deliveries again (POST /api/sandbox/webhooks/retry), by id or every failed one')
    .argument('[delivery-id...]', 'ids of the deliveries (whd_..., at most 50; see sandbox webhook deliveries); default every failed one')
  addDeliveryWaitOption(addApiTargetOptions(command))
  addJsonOption(command, 'print one JSON report on stdout and nothing else (an error: {"error": {"code", "message"}})')
  printErrorsAsJson(keepExitCodeWhenStdoutCloses(command)).action((ids: string[], flags: RetryFlags) => runRetry(ids, flags, command))
}
