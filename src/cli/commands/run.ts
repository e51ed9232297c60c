import { Option, type Command } from 'commander'
import { canPrompt } from '../can-prompt.js'
import { CliError, describeListenError, keepExitCodeWhenStdoutCloses, printJsonDocument, printErrorsAsJson } from '../cli-error.js'
import { escapeControls } from '../../text/escape-controls.js'
import { CliErrorCodes } from '../../errors/codes.js'
import { loadChosenScenarios } from '../load-chosen.js'
import { addJsonOption, addReceiverOptions, formatDuration, readDurationFlag, resolveReceiverFlags, type ReceiverFlags } from '../options.js'
import { withPromptSignals } from '../prompt-signals.js'
import type { TransportOptions } from '../../client/send-request.js'
import type { Scenario } from '../../scenarios/scenario-schema.js'
import type { ListenError } from '../../server/listen-errors.js'
import type { RunServer } from '../../scenarios/run-server.js'

/** A server started in the background is up in seconds, or minutes in a slow CI: an hour is plenty. */
const MAX_WAIT_MS = 3_600_000

interface RunFlags extends ReceiverFlags {
  baseUrl?: string
  apiKey?: string
  startServer?: boolean
  json?: boolean
  junit?: string
  list?: boolean
  bail?: boolean
  tag: string[]
  dir?: string
  wait?: string
  timeout?: string
  verbose?: boolean
  githubReport: boolean
  schema?: boolean
  watch?: boolean
}

/** What a run needs once its flags are checked: each run of `--watch` uses it again. */
interface RunSetup {
  args: string[]
  flags: RunFlags
  command: Command
  baseUrl?: string
  apiKey?: string
  receiver: ReturnType<typeof resolveReceiverFlags>
  waitForServerMs?: number
  timeoutMs?: number
  /** The proxy the requests go through, as said (password masked). */
  proxy?: string
}

/** `--verbose`: every attempt of every request, as sent and as answered, under its scenario. */
async function createVerboseLog(say: (line: string) => void): Promise<NonNullable<TransportOptions['onAttempt']>> {
  const { formatExchange } = await import('../verbose-exchange.js')
  return (request, answer, wire) => {
    for (const line of formatExchange(request.method, wire, answer)) say(`      ${line}`)
  }
}

/** On a terminal, without named scenarios: ask which to run (all checked). */
async function pickScenarios(scenarios: Scenario[]): Promise<Scenario[]> {
  const { checkbox } = await import('@inquirer/prompts')
  const ids = await withPromptSignals((signal) => checkbox({
    message: 'Which scenarios to run? (space toggles, a toggles all, enter runs)',
    choices: scenarios.map((scenario) => ({ name: escapeControls(`${scenario.id.padEnd(28)} ${scenario.name}`), value: scenario.id, checked: true })),
    required: true,
    pageSize: 20,
  }, { signal }))
  return scenarios.filter((scenario) => ids.includes(scenario.id))
}

async function runRun(args: string[], flags: RunFlags, command: Command): Promise<void> {
  if (flags.watch) (await import('../run-watch.js')).refuseWithWatch(flags)
  if (flags.schema) {
    refuseWithSchema(args, flags)
    const { buildScenarioJsonSchema } = await import('../../scenarios/scenario-json-schema.js')
    printJsonDocument(command, buildScenarioJsonSchema(), 2)
    return
  }
  let scenarios: Scenario[] = []
  const out = await import('../output.js')
  const write = (line: string) => process.stdout.write(`${line}\n`)
  // With --watch the files are read at each run, and a broken one is told and waited on.
  if (!flags.watch) {
    const { all, chosen } = await loadChosenScenarios(args, flags.dir, flags.tag)
    if (flags.list) {
      if (flags.json) {
        printJsonDocument(command, chosen.map(({ id, name, description, tags, file }) => ({ id, name, description, tags, file })))
      }
      else for (const scenario of chosen) write(`${escapeControls(scenario.id).padEnd(28)} ${out.chalk.dim(scenario.tags.join(','))}  ${escapeControls(scenario.name)}`)
      return
    }
    scenarios = chosen
    const interactive = args.length === 0 && flags.tag.length === 0 && !flags.json && canPrompt()
    if (interactive) scenarios = await pickScenarios(all)
    if (scenarios.length === 0) throw new CliError(noScenarioMessage(flags))
  }
  // The checks `webhook trigger` and its kin make too: an http(s) URL without a password, a sendable sk_sandbox_ key.
  const { readApiKey, readBaseUrl } = await import('../api-target.js')
  const baseUrl = flags.startServer ? undefined : readBaseUrl(flags.baseUrl)
  const apiKey = readApiKey(flags.apiKey)
  const receiver = resolveReceiverFlags(flags)
  const waitForServerMs = readDurationFlag('--wait', flags.wait, MAX_WAIT_MS)
  const timeoutMs = readDurationFlag('--timeout', flags.timeout, MAX_WAIT_MS)
  const outputFile = await import('../output-file.js')
  // A CI job should learn of a bad report path before it waits for every scenario.
  if (flags.junit) await outputFile.prepareOutputFile(flags.junit, 'the JUnit report')
  const proxy = await (await import('../use-proxy.js')).useProxy(baseUrl, out.createNoteWriter(flags.json, write))
  const setup: RunSetup = { args, flags, command, baseUrl, apiKey, receiver, waitForServerMs, timeoutMs, proxy }
  if (!flags.watch) return runChosen(scenarios, setup, write)
  const { watchRun } = await import('../run-watch.js')
  const { isScenarioFilePath, SHIPPED_SCENARIOS_DIR } = await import('../../scenarios/load-scenarios.js')
  await watchRun({
    files: args.filter(isScenarioFilePath),
    // Ids name files of the directory, and with no arguments the run is the directory's.
    dirs: flags.dir !== undefined || args.length === 0 || args.some((arg) => !isScenarioFilePath(arg)) ? [flags.dir ?? SHIPPED_SCENARIOS_DIR] : [],
    baseUrl,
    serverPerRun: apiKey !== undefined,
    load: async () => {
      const { chosen } = await loadChosenScenarios(args, flags.dir, flags.tag)
      if (chosen.length === 0) throw new CliError(noScenarioMessage(flags))
      return chosen
    },
    run: (chosen, server, say) => runChosen(chosen, { ...setup, server }, say),
  })
}

function noScenarioMessage(flags: RunFlags): string {
  return flags.tag.length > 0 ? `no scenario has the tag ${flags.tag.join(' or ')}` : 'no scenarios to run'
}

/**
 * Runs SCENARIOS as SETUP says, printing with WRITE: progress, the summary (or the JSON report)
 * and the reports to files; a run that failed or stopped on setup throws its CliError.
 */
async function runChosen(scenarios: Scenario[], setup: RunSetup & { server?: RunServer }, write: (line: string) => void): Promise<void> {
  const { args, flags, command, baseUrl, apiKey, receiver, waitForServerMs, timeoutMs, proxy } = setup
  const out = await import('../output.js')
  const outputFile = await import('../output-file.js')
  const { runScenarios, formatJunitReport, RUN_TIMEOUT_MS } = await import('../../scenarios/index.js')
  const { createRunProgress, printRunSummary, formatRetryWait } = await import('../run-progress.js')
  const progress = flags.json ? {} : createRunProgress(write)
  // Where the tunnel must forward to: before the first scenario, which may wait on it.
  const note = out.createNoteWriter(flags.json, write)
  const onReceiverStart = ({ localUrl, publicUrl }: { localUrl: string; publicUrl?: string }) => {
    note(`webhook receiver listening on ${localUrl}${publicUrl ? `, expecting deliveries through ${publicUrl}/hooks/<run> (forward ${publicUrl}/* to ${localUrl})` : ''}`)
  }
  const report = await runScenarios(scenarios, {
    baseUrl,
    server: setup.server,
    apiKey,
    bail: flags.bail,
    includeLocalOnly: flags.tag.includes('local-only') || args.length > 0,
    waitForServerMs,
    ...receiver,
    onReceiverStart,
    ...progress,
    // A rate-limit wait can last minutes, and a server that never answers costs a timeout per
    // attempt: say so before each wait, or the run looks stuck (with --json on stderr, as stdout
    // holds only the report).
    transport: {
      timeoutMs: timeoutMs ?? RUN_TIMEOUT_MS,
      ...(flags.verbose ? { onAttempt: await createVerboseLog(flags.json ? (line) => process.stderr.write(`${line}\n`) : (line) => write(out.chalk.dim(line))) } : {}),
      onRetryWait: (wait) => {
        const line = formatRetryWait(wait, timeoutMs ?? RUN_TIMEOUT_MS)
        if (flags.json) process.stderr.write(`sandbox: ${line}\n`)
        else write(out.chalk.yellow(`      ${line}`))
      },
    },
  }).catch((error: unknown) => {
    // The only port a run listens on by choice is the receiver's: name the flag that moves it.
    const code = (error as ListenError | undefined)?.code
    if (code === 'EADDRINUSE' || code === 'EACCES') throw new CliError(describeListenError(error as ListenError, '--receiver-port'), { code, cause: error })
    throw error
  })
  const unreachable = report.scenarios.find((scenario) => scenario.connection_error)
  // A server that answers with a redirect, an untrusted certificate or plain HTTP is running: its message says what to fix.
  const running = unreachable && /redirect to|its TLS certificate |answers plain HTTP, not TLS|answers https only|proxy answered/.test(unreachable.error ?? '')
  const { formatProxyHint } = await import('../api-target.js')
  const hint = proxy
    ? formatProxyHint(proxy, baseUrl!)
    : '; is the server running? (sandbox serve; --wait 30s if it is still starting; or leave out --base-url to start one in-process)'
  // A refused key is setup, like an unreachable server: the scenarios after it were not run.
  const refused = report.scenarios.find((scenario) => scenario.key_refused)
  const stop = unreachable ? new CliError(`${unreachable.error}${running ? '' : hint}`, { code: CliErrorCodes.UNREACHABLE })
    : refused ? new CliError(`${refused.id}: ${refused.steps.find((step) => !step.ok)?.note ?? 'the server refused the run\'s key'}; the run stopped there`, { code: CliErrorCodes.KEY_REFUSED })
      : undefined
  // Before the closing summary, whose last line stays `N passed, N failed`.
  if (flags.githubReport) await (await import('../github-report.js')).reportToGithub(report, { json: flags.json, stopMessage: stop?.message })
  if (flags.json) {
    printJsonDocument(command, report, 2)
  } else printRunSummary(write, report)
  // After the summary: should the path break during the run, the results are still shown.
  if (flags.junit) await outputFile.writeOutputFile(flags.junit, formatJunitReport(report), 'the JUnit report')
  if (stop) throw stop
  if (report.failed > 0) throw new CliError(`${report.failed} of ${out.formatCount(report.scenarios.length, 'scenario')} failed`, { exitCode: 1, code: CliErrorCodes.FAILED })
}

/**
 * `--schema` prints one document, the same for every scenario: scenario ids, --tag, --list or
 * --junit with it mean the user expected a run or a listing, which silently not happening hides.
 */
function refuseWithSchema(args: string[], flags: RunFlags): void {
  const other = args.length > 0 ? `scenario ${args[0]}` : flags.tag.length > 0 ? '--tag' : flags.list ? '--list' : flags.junit ? '--junit' : undefined
  if (other) throw new CliError(`--schema cannot be used with ${other}: it prints the JSON Schema of every scenario file and runs nothing; run without --schema to ${flags.list ? 'list' : 'run'} scenarios`)
}

/** `sandbox run`: walks scenarios against a base URL (or an in-process server) like a test runner. */
export function registerRun(program: Command): void {
  const command = program
    .command('run')
    .description('run scenarios that walk the loan and repayment flows and check every answer')
    .argument('[scenario...]', 'scenario ids (see --list) or paths to scenario .json files; default all')
    .addOption(new Option('--base-url <url>', 'server to test (env SANDBOX_BASE_URL); default: an in-process server on a free port'))
    .addOption(new Option('--api-key <key>', 'API key for the scenarios (env SANDBOX_API_KEY); default: a fresh key per scenario'))
    .addOption(new Option('--start-server', 'start an in-process server (memory storage) even when a base URL is set'))
    .addOption(new Option('--junit <file>', 'also write a JUnit XML report to FILE'))
    .addOption(new Option('--list', 'list the scenarios and exit'))
    .addOption(new Option('--schema', 'print the JSON Schema of scenario files (for editors; dist/scenario.schema.json in the package) and exit'))
    .addOption(new Option('--bail', 'stop after the first failed scenario'))
    .addOption(new Option('--watch', 'run again when a scenario file changes (Ctrl+C quits); the in-process server stays up between runs (with --api-key, a new one per run)'))
    .addOption(new Option('--verbose', 'print every request and answer: headers and bodies, the API key masked (on stderr with --json)'))
    .addOption(new Option('--tag <tag>', 'only scenarios with this tag (repeatable)').argParser((value: string, previous: string[]) => [...previous, value]).default([], 'any'))
    .addOption(new Option('--dir <dir>', 'directory of scenario files (default: the shipped scenarios)'))
    .addOption(new Option('--wait <duration>', `wait up to DURATION (e.g. 30s, 1.5s or 500ms; at most ${formatDuration(MAX_WAIT_MS)}) for --base-url to answer, for a server started in the background`))
    .addOption(new Option('--timeout <duration>', 'give up on an attempt of a request after DURATION, then retry (4 attempts in all; default 10s)'))
    .addOption(new Option('--no-github-report', 'under GitHub Actions (GITHUB_ACTIONS=true), print no error annotations and write no job summary'))
  addReceiverOptions(command)
  addJsonOption(command, 'print one JSON report on stdout and nothing else (an error that stops the run: {"error": {"code", "message"}})')
  printErrorsAsJson(keepExitCodeWhenStdoutCloses(command)).action((args: string[], flags: RunFlags) => runRun(args, flags, command))
}
