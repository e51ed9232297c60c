import { Option, type Command } from 'commander'
import type { ApiTargetFlags } from '../../api-target.js'
import { CliError, printErrorsAsJson, printJsonDocument } from '../../cli-error.js'
import { addApiTargetOptions, addJsonOption } from '../../options.js'
import { hintValues } from '../../completion/value-hints.js'

interface RegisterFlags extends ApiTargetFlags {
  events?: string
  rotateSecret?: boolean
  json?: boolean
}

/** API refusals of the endpoint that are the command line's to fix: the URL or the events given. */
const ARGUMENT_ERRORS = { WEBHOOK_URL_REQUIRED: {}, WEBHOOK_URL_INVALID: {}, WEBHOOK_EVENTS_INVALID: {} }

async function runRegister(url: string, flags: RegisterFlags, command: Command): Promise<void> {
  const { EVENT_TYPES } = await import('../../../webhooks/types.js')
  const { readEventName } = await import('../../event-names.js')
  const names = flags.events?.split(',').map((name) => name.trim()).filter(Boolean)
  if (names !== undefined && names.length === 0) throw new CliError(`--events names no event: give one or more of ${EVENT_TYPES.join(', ')}, comma-separated, or all`)
  // Each name is checked, `all` aside: a typo next to `all` was dropped without a word.
  const named = [...new Set((names ?? []).filter((name) => name !== 'all').map((name) => readEventName(name)))]
  const all = names?.includes('all') ?? false
  if (all && named.length > 0) {
    throw new CliError(`--events all stands for every event type: give it alone, or list the types you want (not all with ${named.join(', ')})`)
  }
  const given = names === undefined ? undefined : all ? [...EVENT_TYPES] : named
  const { resolveApiTarget, toApiCliError } = await import('../../api-target.js')
  const target = await resolveApiTarget(flags, { json: flags.json })
  const { createSandboxClient } = await import('../../../client/sandbox-client.js')
  const client = createSandboxClient(target.transport)
  const refused = (error: unknown) => toApiCliError(error, target, ARGUMENT_ERRORS)
  // The API takes a missing `events` as every type: an update without --events (a new URL, a
  // rotation) keeps the subscription the endpoint has, as a partner would expect of the command.
  const events = given ?? (await client.getWebhook().catch((error: unknown) => { throw refused(error) })).endpoint?.events
  const answer = await client.setWebhook({ url, events, rotate_secret: flags.rotateSecret }).catch((error: unknown) => {
    throw refused(error)
  })
  if (flags.json) return printJsonDocument(command, { endpoint: answer.endpoint }, 2)
  const { chalk } = await import('../../output.js')
  const { formatEndpoint } = await import('../../delivery-lines.js')
  const write = (line: string) => process.stdout.write(`${line}\n`)
  write(formatEndpoint(answer.endpoint))
  // The API shows the secret once: on first create and on rotation.
  if (answer.endpoint?.signingSecret) write(`signing secret: ${answer.endpoint.signingSecret} ${chalk.dim('(shown this once: give it to your receiver)')}`)
  else write(chalk.dim('signing secret unchanged (--rotate-secret issues a new one)'))
}

/** `sandbox webhook register`: POST /api/sandbox/webhooks, the key's one endpoint, with its secret when the API shows it. */
export function registerWebhookRegister(group: Command): void {
  const command = group
    .command('register')
    .description('register (or update, or enable again) the key\'s webhook endpoint, and print its signing secret when the API gives it')
    .argument('<url>', 'the receiver, https:// and public (or local and http:// on sandbox serve --allow-local-webhooks)')
    .addOption(hintValues(new Option('--events <types>', 'comma-separated event types to receive (loan.issued stands for sandbox.loan.issued), or all; default every type for a new endpoint, the ones it has for an update'), { source: 'event-types', words: ['all'], separator: ',' }))
    .addOption(new Option('--rotate-secret', 'issue a new signing secret at once, with no overlap (printed this once)'))
  addApiTargetOptions(command)
  addJsonOption(command, 'print `{ endpoint }` on stdout, `signingSecret` included when given (an error: {"error": {"code", "message"}})')
  printErrorsAsJson(command).action((url: string, flags: RegisterFlags) => runRegister(url, flags, command))
}
