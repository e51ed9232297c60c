import { Option, type Command } from 'commander'
import { canPrompt } from '../../can-prompt.js'
import { CliError, keepExitCodeWhenStdoutCloses, printErrorsAsJson, printJsonDocument } from '../../cli-error.js'
import { addJsonOption, parseDuration } from '../../options.js'
import { withPromptSignals } from '../../prompt-signals.js'
import { checkApiKey, readApiKey, readBaseUrl } from '../../target-flags.js'
import { CliErrorCodes } from '../../../errors/codes.js'
import type { TransportOptions } from '../../../client/send-request.js'
import type { EventType } from '../../../domain/types.js'

interface TriggerFlags {
  baseUrl?: string
  apiKey?: string
  loan?: string
  wait?: string | true
  verbose?: boolean
  json?: boolean
}

const DEFAULT_BASE_URL = 'http://127.0.0.1:4010'
/** Any key works on a `serve` without `--keys`: a fixed one, so that triggers share one state. */
const LOCAL_KEY = 'sk_sandbox_webhook_trigger_local'
/** `--wait` alone: the first try and the 5 s retry of the default schedule. */
const DEFAULT_WAIT_MS = 10_000
const MAX_WAIT_MS = 900_000

async function loadEventTypes(): Promise<readonly EventType[]> {
  return (await import('../../../webhooks/types.js')).EVENT_TYPES
}

/** The event named (`loan.issued` stands for `sandbox.loan.issued`), or asked for on a terminal. */
async function resolveEvent(name: string | undefined, json: boolean | undefined): Promise<EventType> {
  const types = await loadEventTypes()
  if (name === undefined) {
    if (json || !canPrompt()) throw new CliError(`name the event to trigger: one of ${types.join(', ')}`)
    const { select } = await import('@inquirer/prompts')
    return withPromptSignals((signal) => select({ message: 'Which event?', choices: types.map((type) => ({ name: type, value: type })), pageSize: types.length }, { signal }))
  }
  const full = name.startsWith('sandbox.') ? name : `sandbox.${name}`
  const found = types.find((type) => type === full)
  if (!found) throw new CliError(`unknown event "${name}": one of ${types.join(', ')}`)
  return found
}

function isLoopback(baseUrl: string): boolean {
  const { hostname } = new URL(baseUrl)
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname)
}

/** The key: the flag or variable; else on a local server a fixed one; else asked for on a terminal. */
async function resolveKey(flag: string | undefined, baseUrl: string, json: boolean | undefined): Promise<{ key: string; local: boolean }> {
  const given = readApiKey(flag)
  if (given !== undefined) return { key: given, local: false }
  if (isLoopback(baseUrl)) return { key: LOCAL_KEY, local: true }
  if (json || !canPrompt()) throw new CliError(`give the API key for ${baseUrl} with --api-key or SANDBOX_API_KEY`)
  const { password } = await import('@inquirer/prompts')
  const key = await withPromptSignals((signal) => password({ message: `API key for ${baseUrl} (sk_sandbox_...)`, mask: true }, { signal }))
  checkApiKey(key, 'the key')
  return { key, local: false }
}

function readWait(wait: string | true | undefined): number | undefined {
  if (wait === undefined) return undefined
  if (wait === true) return DEFAULT_WAIT_MS
  try {
    return parseDuration(wait, MAX_WAIT_MS)
  } catch (error) {
    // `trigger --wait loan.issued`: the optional value took the event.
    const event = /^[a-z_]+\.[a-z_.]+$/.test(wait) ? `; "${wait}" looks like the event: name it before --wait, or give --wait a duration (--wait 10s)` : ''
    throw new CliError(`--wait: ${(error as Error).message}${event}`)
  }
}

async function runTrigger(name: string | undefined, flags: TriggerFlags, command: Command): Promise<void> {
  const baseUrl = readBaseUrl(flags.baseUrl) ?? DEFAULT_BASE_URL
  const waitMs = readWait(flags.wait)
  const event = await resolveEvent(name, flags.json)
  const { key, local } = await resolveKey(flags.apiKey, baseUrl, flags.json)
  const { chalk } = await import('../../output.js')
  const { formatTriggerRequest, formatTriggerDeliveries, toTriggerCliError } = await import('../../trigger-lines.js')
  const { maskApiKey } = await import('../../../keys/keys-file.js')
  const write = (line: string) => process.stdout.write(`${line}\n`)
  const say = flags.json ? (line: string) => process.stderr.write(`sandbox: ${line}\n`) : (line: string) => write(chalk.dim(line))
  const proxy = await (await import('../../use-proxy.js')).useProxy(baseUrl, say)
  if (!flags.json) write(`triggering ${chalk.bold(event)} on ${baseUrl} (key ${maskApiKey(key)}${local ? ', the default for a local server' : ''})`)
  const { triggerEvent } = await import('../../../webhook-tools/trigger-event.js')
  let onAttempt: TransportOptions['onAttempt']
  if (flags.verbose) {
    const { formatExchange } = await import('../../verbose-exchange.js')
    onAttempt = (request, answer, wire) => {
      for (const line of formatExchange(request.method, wire, answer)) say(`    ${line}`)
    }
  }
  const report = await triggerEvent({
    baseUrl,
    apiKey: key,
    event,
    loanId: flags.loan,
    waitMs,
    onRequest: flags.json ? undefined : (request) => write(formatTriggerRequest(request)),
    onAttempt,
  }).catch((error: unknown) => {
    throw toTriggerCliError(error, { baseUrl, proxy, local })
  })
  if (flags.json) printJsonDocument(command, report, 2)
  else for (const line of formatTriggerDeliveries(report)) write(line)
  // Nothing queued is setup (a receiver to register); queued but not delivered is the receiver failing the check.
  if (report.problem && report.waited_ms === null) throw new CliError(report.problem, { code: CliErrorCodes.NO_RECEIVER })
  if (report.problem) throw new CliError(report.problem, { exitCode: 1, code: CliErrorCodes.FAILED })
}

/** `sandbox webhook trigger`: makes a server send one event type, through the API's own flows. */
export function registerWebhookTrigger(group: Command): void {
  const command = group
    .command('trigger')
    .description('make a sandbox server send one event type to the key\'s webhook receivers, by walking the API')
    .argument('[event]', 'the event type, e.g. sandbox.loan.issued or loan.issued (asked for on a terminal)')
    .addOption(new Option('--base-url <url>', `server to trigger on (env SANDBOX_BASE_URL, default ${DEFAULT_BASE_URL}: sandbox serve)`))
    .addOption(new Option('--api-key <key>', 'API key whose receivers get the event (env SANDBOX_API_KEY); on a local server, a fixed default'))
    .addOption(new Option('--loan <id>', 'for the loan and repayment events: act on this active loan instead of opening a small new one'))
    .addOption(new Option('--wait [duration]', `wait up to DURATION (default ${DEFAULT_WAIT_MS / 1000}s) for every delivery to be delivered; exit 1 if one is not`))
    .addOption(new Option('--verbose', 'print every request and answer: headers and bodies, the API key masked'))
  addJsonOption(command, 'print one JSON report on stdout and nothing else (an error: {"error": {"code", "message"}})')
  printErrorsAsJson(keepExitCodeWhenStdoutCloses(command)).action((name: string | undefined, flags: TriggerFlags) => runTrigger(name, flags, command))
}
