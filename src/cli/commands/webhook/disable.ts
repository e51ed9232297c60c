import type { Command } from 'commander'
import type { ApiTargetFlags } from '../../api-target.js'
import { printErrorsAsJson, printJsonDocument } from '../../cli-error.js'
import { addApiTargetOptions, addJsonOption } from '../../options.js'

interface DisableFlags extends ApiTargetFlags {
  json?: boolean
}

async function runDisable(flags: DisableFlags, command: Command): Promise<void> {
  const { resolveApiTarget, toApiCliError } = await import('../../api-target.js')
  const target = await resolveApiTarget(flags, { json: flags.json })
  const { createSandboxClient } = await import('../../../client/sandbox-client.js')
  const answer = await createSandboxClient(target.transport).deleteWebhook().catch((error: unknown) => {
    // Nothing registered: setup, as a refused key is (exit 2).
    throw toApiCliError(error, target, { WEBHOOK_ENDPOINT_REQUIRED: {} })
  })
  if (flags.json) return printJsonDocument(command, { endpoint: answer.endpoint }, 2)
  const { formatEndpoint } = await import('../../delivery-lines.js')
  process.stdout.write(`${formatEndpoint(answer.endpoint)}\n`)
}

/** `sandbox webhook disable`: DELETE /api/sandbox/webhooks, which disables the endpoint and keeps its log. */
export function registerWebhookDisable(group: Command): void {
  const command = group
    .command('disable')
    .description('disable the key\'s webhook endpoint (DELETE /api/sandbox/webhooks; the log is kept, register enables it again)')
  addApiTargetOptions(command)
  addJsonOption(command, 'print `{ endpoint }` on stdout (an error: {"error": {"code", "message"}})')
  printErrorsAsJson(command).action((flags: DisableFlags) => runDisable(flags, command))
}
