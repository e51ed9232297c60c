import { Argument, Option, type Command } from 'commander'
import { canPrompt } from '../../can-prompt.js'
import { CliError, keepExitCodeWhenStdoutCloses, printErrorsAsJson, printJsonDocument } from '../../cli-error.js'
import { addApiTargetOptions, addDeliveryWaitOption, addJsonOption, readDeliveryWait } from '../../options.js'
import { withPromptSignals } from '../../prompt-signals.js'
import { hintValues } from '../../completion/value-hints.js'
import { CliErrorCodes } from '../../../errors/codes.js'
import type { EventType } from '../../../domain/types.js'
import type { ApiTargetFlags } from '../../api-target.js'

interface TriggerFlags extends ApiTargetFlags {
  loan?: string
  wait?: string | true
  json?: boolean
}

/**
 * The event named (`loan.issued` stands for `sandbox.loan.issued`); undefined when it is to be
 * asked for on a terminal, and a usage error when it cannot be.
 */
async function readEvent(name: string | undefined, json: boolean | undefined): Promise<EventType | undefined> {
  if (name !== undefined) return (await import('../../event-names.js')).readEventName(name)
  const { EVENT_TYPES } = await import('../../../webhooks/types.js')
  if (json || !canPrompt()) throw new CliError(`name the event to trigger: one of ${EVENT_TYPES.join(', ')}`)
  return undefined
}

async function askEvent(): Promise<EventType> {
  const { EVENT_TYPES } = await import('../../../webhooks/types.js')
  const { select } = await import('@inquirer/prompts')
  return withPromptSignals((signal) => select({ message: 'Which event?', choices: EVENT_TYPES.map((type) => ({ name: type, value: type })), pageSize: EVENT_TYPES.length }, { signal }))
}

async function checkLoan(event: EventType, loan: string | undefined): Promise<void> {
  const { checkTriggerLoan } = await import('../../../webhook-tools/trigger-event.js')
  try {
    checkTriggerLoan(event, loan)
  } catch (error) {
    throw new CliError((error as Error).message)
  }
}

async function runTrigger(name: string | undefined, flags: TriggerFlags, command: Command): Promise<void> {
  const waitMs = readDeliveryWait(flags.wait)
  const named = await readEvent(name, flags.json)
  if (named) await checkLoan(named, flags.loan)
  const { resolveApiTarget } = await import('../../api-target.js')
  // Before the event is asked for: a bad flag is told at once, not after the event is picked.
  const target = await resolveApiTarget(flags, { json: flags.json })
  const event = named ?? await askEvent()
  if (!named) await checkLoan(event, flags.loan)
  const { triggerEvent } = await import('../../../webhook-tools/trigger-event.js')
  const { chalk } = await import('../../output.js')
  const write = (line: string) => process.stdout.write(`${line}\n`)
  const { formatTriggerRequest, toTriggerCliError } = await import('../../trigger-lines.js')
  const { formatDeliveries } = await import('../../delivery-lines.js')
  const { maskApiKey } = await import('../../../keys/api-key-text.js')
  if (!flags.json) write(`triggering ${chalk.bold(event)} on ${target.baseUrl} (key ${maskApiKey(target.apiKey)}${target.local ? ', the default for a local server' : ''})`)
  const report = await triggerEvent({
    ...target.transport,
    event,
    loanId: flags.loan,
    waitMs,
    onRequest: flags.json ? undefined : (request) => write(formatTriggerRequest(request)),
  }).catch((error: unknown) => {
    throw toTriggerCliError(error, target)
  })
  if (flags.json) printJsonDocument(command, report, 2)
  else for (const line of formatDeliveries(report.deliveries, report.waited_ms, 'deliveries queued')) write(line)
  // Nothing queued is setup (a receiver to register); queued but not delivered is the receiver failing the check.
  if (report.problem && report.waited_ms === null) throw new CliError(report.problem, { code: CliErrorCodes.NO_RECEIVER })
  if (report.problem) throw new CliError(report.problem, { exitCode: 1, code: CliErrorCodes.FAILED })
}

/** `sandbox webhook trigger`: makes a server send one event type, through the API's own flows. */
export function registerWebhookTrigger(group: Command): void {
  const command = group
    .command('trigger')
    .description('make a sandbox server send one event type to the key\'s webhook receivers, by walking the API')
    .addArgument(hintValues(new Argument('[event]', 'the event type, e.g. sandbox.loan.issued or loan.issued (asked for on a terminal)'), { source: 'event-types' }))
    .addOption(new Option('--loan <id>', 'for the loan and repayment events: act on this active loan instead of opening a small new one'))
  addDeliveryWaitOption(addApiTargetOptions(command))
  addJsonOption(command, 'print one JSON report on stdout and nothing else (an error: {"error": {"code", "message"}})')
  printErrorsAsJson(keepExitCodeWhenStdoutCloses(command)).action((name: string | undefined, flags: TriggerFlags) => runTrigger(name, flags, command))
}
