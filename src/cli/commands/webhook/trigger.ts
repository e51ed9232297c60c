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

/** The event named (`loan.issued` stands for `sandbox.loan.issued`), or asked for on a terminal. */
async function resolveEvent(name: string | undefined, json: boolean | undefined): Promise<EventType> {
  const types: readonly EventType[] = (await import('../../../webhooks/types.js')).EVENT_TYPES
  if (name === undefined) {
    if (json || !canPrompt()) throw new CliError(`name the event to trigger: one of ${types.join(', ')}`)
    const { select } = await import('@inquirer/prompts')
    return withPromptSignals((signal) => select({ message: 'Which event?', choices: types.map((type) => ({ name: type, value: type })), pageSize: types.length }, { signal }))
  }
  return (await import('../../event-names.js')).readEventName(name)
}

async function runTrigger(name: string | undefined, flags: TriggerFlags, command: Command): Promise<void> {
  const waitMs = readDeliveryWait(flags.wait)
  const event = await resolveEvent(name, flags.json)
  const { checkTriggerLoan, triggerEvent } = await import('../../../webhook-tools/trigger-event.js')
  try {
    checkTriggerLoan(event, flags.loan)
  } catch (error) {
    throw new CliError((error as Error).message)
  }
  const { chalk } = await import('../../output.js')
  const write = (line: string) => process.stdout.write(`${line}\n`)
  const { resolveApiTarget } = await import('../../api-target.js')
  const target = await resolveApiTarget(flags, { json: flags.json })
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
