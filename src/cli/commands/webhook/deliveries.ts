import { InvalidArgumentError, Option, type Command } from 'commander'
import type { ApiTargetFlags } from '../../api-target.js'
import type { DeliveryEntry } from '../../../webhook-tools/wait-for-deliveries.js'
import { printErrorsAsJson, printJsonDocument, printJsonLinesInstead } from '../../cli-error.js'
import { addApiTargetOptions, addJsonOption } from '../../options.js'
import { hintValues } from '../../completion/value-hints.js'
import { suggestRepeatedFlag } from '../../usage-hints.js'
import { onFirstStopSignal } from '../../stop-signals.js'

const STATUSES = ['pending', 'delivered', 'retrying', 'failed'] as const

interface DeliveriesFlags extends ApiTargetFlags {
  status: string[]
  follow?: boolean
  json?: boolean
}

/** Reads of the log while following: a quarter of the key's 120 requests a minute, leaving the rest to the partner's own. */
const FOLLOW_INTERVAL_MS = 2000

async function runDeliveries(flags: DeliveriesFlags, command: Command): Promise<void> {
  // Followed, its output is JSON lines from the start, as `logs --json`: a script reading them
  // takes every line for a delivery, so one that cannot start leaves stdout empty (stderr says why).
  if (flags.follow) printJsonLinesInstead(command)
  const { chalk } = await import('../../output.js')
  const write = (line: string) => process.stdout.write(`${line}\n`)
  const { resolveApiTarget, toApiCliError } = await import('../../api-target.js')
  const target = await resolveApiTarget(flags, { json: flags.json })
  const { createSandboxClient } = await import('../../../client/sandbox-client.js')
  const client = createSandboxClient(target.transport)
  const { endpoint, deliveries } = await client.getWebhook().catch((error: unknown) => {
    throw toApiCliError(error, target)
  })
  const wanted = (delivery: DeliveryEntry) => flags.status.length === 0 || flags.status.includes(delivery.status)
  // Oldest first, as a terminal log reads: the newest last, above the prompt.
  const shown = deliveries.filter(wanted).reverse()
  if (flags.json && !flags.follow) return printJsonDocument(command, { endpoint, deliveries: shown }, 2)
  const { formatDelivery, formatEndpoint, formatQueueHints } = await import('../../delivery-lines.js')
  // Ctrl+C is how --follow ends, as with `logs --follow` and `webhook listen`: a clean stop and
  // exit 0. Handlers before the first line: a supervisor or a quick Ctrl+C may signal as soon as it shows.
  const stop = new AbortController()
  if (flags.follow) onFirstStopSignal(() => stop.abort())
  if (!flags.json) {
    write(formatEndpoint(endpoint))
    if (shown.length === 0 && !flags.follow) write(chalk.dim(flags.status.length > 0 ? `no ${flags.status.join(' or ')} delivery among the 50 newest` : 'no delivery yet'))
  }
  if (!flags.follow) {
    for (const delivery of shown) write(formatDelivery(delivery, { clock: 'created_at', requestId: true }))
    // Only where pending deliveries are listed: the hint is about them.
    if (flags.status.length === 0 || flags.status.includes('pending')) for (const hint of formatQueueHints(deliveries)) write(hint)
    return
  }
  const { formatJson } = await import('../../json-text.js')
  const { SandboxApiError, SandboxConnectionError } = await import('../../../client/api-error.js')
  const { followDeliveries } = await import('../../../webhook-tools/follow-deliveries.js')
  /** Why reads fail for now, said once until one succeeds again. */
  let pausedBy: 'unreachable' | 'rate limit' | undefined
  // Following retries every 2 s itself: no retries within a read, and no note for each.
  await followDeliveries(createSandboxClient({ ...target.transport, retries: 0, onRetryWait: undefined }), {
    intervalMs: FOLLOW_INTERVAL_MS,
    signal: stop.signal,
    first: deliveries,
    onChange: (delivery) => {
      if (wanted(delivery)) write(flags.json ? formatJson(delivery) : formatDelivery(delivery, { clock: 'updated_at', requestId: true }))
    },
    onRead: () => {
      if (pausedBy === 'unreachable') process.stderr.write('sandbox: reached the server again\n')
      if (pausedBy === 'rate limit') process.stderr.write('sandbox: reading the delivery log again\n')
      pausedBy = undefined
    },
    // A server restarted meanwhile (`serve` stopped and started again) is waited for, said once;
    // so is the key's rate limit, which the partner's own requests use up on a busy key (a 429 is
    // not counted, so reading again every 2 s takes nothing from them).
    onReadError: (error) => {
      const cause = error instanceof SandboxConnectionError ? 'unreachable' : error instanceof SandboxApiError && error.status === 429 ? 'rate limit' : undefined
      if (cause === undefined) return false
      if (pausedBy !== cause) process.stderr.write(`sandbox: ${(error as Error).message.replace(/\.$/, '')}; still following, every ${FOLLOW_INTERVAL_MS / 1000} s\n`)
      pausedBy = cause
      return true
    },
  }).catch((error: unknown) => {
    throw toApiCliError(error, target)
  })
}

/** `sandbox webhook deliveries`: the key's endpoint and delivery log (GET /api/sandbox/webhooks), one line each. */
export function registerWebhookDeliveries(group: Command): void {
  const command = group
    .command('deliveries')
    .description('show the key\'s webhook endpoint and its 50 newest deliveries (GET /api/sandbox/webhooks)')
    .addOption(hintValues(new Option('--status <status>', `only deliveries in this state (repeatable): ${STATUSES.join(', ')}`).argParser((value: string, previous: string[]) => {
      const isStatus = (word: string) => (STATUSES as readonly string[]).includes(word)
      const repeated = suggestRepeatedFlag('--status', value, isStatus)
      if (repeated !== undefined) throw new InvalidArgumentError(`one state per --status: ${repeated}`)
      if (!isStatus(value)) throw new InvalidArgumentError(`one of ${STATUSES.join(', ')}`)
      return [...previous, value]
    }).default([], 'any'), { words: STATUSES, repeatable: true }))
    .addOption(new Option('--follow', 'keep printing each new delivery and each new attempt until Ctrl+C (the log read every 2 s)'))
  addApiTargetOptions(command)
  addJsonOption(command, 'print `{ endpoint, deliveries }` on stdout, oldest first (an error: {"error": {"code", "message"}}); with --follow, one delivery per line (an error: on stderr only)')
  printErrorsAsJson(command, { linesWith: '--follow' }).action((flags: DeliveriesFlags) => runDeliveries(flags, command))
}
