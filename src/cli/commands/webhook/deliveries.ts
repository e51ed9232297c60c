import { InvalidArgumentError, Option, type Command } from 'commander'
import type { ApiTargetFlags } from '../../api-target.js'
import { printErrorsAsJson, printJsonDocument } from '../../cli-error.js'
import { addApiTargetOptions, addJsonOption } from '../../options.js'

const STATUSES = ['pending', 'delivered', 'retrying', 'failed'] as const

interface DeliveriesFlags extends ApiTargetFlags {
  status: string[]
  json?: boolean
}

async function runDeliveries(flags: DeliveriesFlags, command: Command): Promise<void> {
  const { chalk } = await import('../../output.js')
  const write = (line: string) => process.stdout.write(`${line}\n`)
  const { resolveApiTarget, toApiCliError } = await import('../../api-target.js')
  const target = await resolveApiTarget(flags, { json: flags.json })
  const { createSandboxClient } = await import('../../../client/sandbox-client.js')
  const { endpoint, deliveries } = await createSandboxClient(target.transport).getWebhook().catch((error: unknown) => {
    throw toApiCliError(error, target)
  })
  // Oldest first, as a terminal log reads: the newest last, above the prompt.
  const shown = deliveries.filter((delivery) => flags.status.length === 0 || flags.status.includes(delivery.status)).reverse()
  if (flags.json) return printJsonDocument(command, { endpoint, deliveries: shown }, 2)
  const { formatDelivery, formatEndpoint } = await import('../../delivery-lines.js')
  const { EVENT_TYPES } = await import('../../../webhooks/types.js')
  write(formatEndpoint(endpoint, EVENT_TYPES.length))
  if (shown.length === 0) write(chalk.dim(flags.status.length > 0 ? `no ${flags.status.join(' or ')} delivery among the 50 newest` : 'no delivery yet'))
  for (const delivery of shown) write(formatDelivery(delivery, { clock: true }))
}

/** `sandbox webhook deliveries`: the key's endpoint and delivery log (GET /api/sandbox/webhooks), one line each. */
export function registerWebhookDeliveries(group: Command): void {
  const command = group
    .command('deliveries')
    .description('show the key\'s webhook endpoint and its 50 newest deliveries (GET /api/sandbox/webhooks)')
    .addOption(new Option('--status <status>', `only deliveries in this state (repeatable): ${STATUSES.join(', ')}`).argParser((value: string, previous: string[]) => {
      if (!(STATUSES as readonly string[]).includes(value)) throw new InvalidArgumentError(`one of ${STATUSES.join(', ')}`)
      return [...previous, value]
    }).default([], 'any'))
  addApiTargetOptions(command)
  addJsonOption(command, 'print `{ endpoint, deliveries }` on stdout, oldest first (an error: {"error": {"code", "message"}})')
  printErrorsAsJson(command).action((flags: DeliveriesFlags) => runDeliveries(flags, command))
}
