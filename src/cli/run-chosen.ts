import { CliError, describeListenError, printJsonDocument } from './cli-error.js'
import { CliErrorCodes } from '../errors/codes.js'
import type { RunSetup } from './run-setup.js'
import type { TransportOptions } from '../client/request-types.js'
import type { RunServer } from '../scenarios/run-server.js'
import type { Scenario } from '../scenarios/scenario-schema.js'
import type { SeenSecrets } from '../scenarios/seen-secrets.js'
import type { ListenError } from '../server/listen-errors.js'
import { escapeControls } from '../text/escape-controls.js'

/** `--verbose`: every attempt of every request, as sent and as answered, under its scenario. */
async function createVerboseLog(say: (line: string) => void, secrets: SeenSecrets): Promise<NonNullable<TransportOptions['onAttempt']>> {
  const { formatExchange } = await import('./verbose-exchange.js')
  return (request, answer, wire) => {
    for (const line of formatExchange(request.method, wire, answer, secrets.maskText)) say(`      ${line}`)
  }
}

/**
 * Runs SCENARIOS as SETUP says, printing with WRITE: progress, the summary (or the JSON report)
 * and the reports to files; a run that failed or stopped on setup throws its CliError, and one
 * that `setup.signal` aborted throws the signal's reason, having printed no summary.
 */
export async function runChosen(scenarios: Scenario[], setup: RunSetup & { server?: RunServer; signal?: AbortSignal }, write: (line: string) => void): Promise<void> {
  const { args, flags, command, baseUrl, apiKey, receiver, waitForServerMs, timeoutMs, proxy } = setup
  const out = await import('./output.js')
  const outputFile = await import('./output-file.js')
  const { runScenarios, formatJunitReport, RUN_TIMEOUT_MS } = await import('../scenarios/index.js')
  const { SCENARIOS_API_VERSION } = await import('../scenarios/api-version.js')
  const { describeConfigDifferences } = await import('../scenarios/config-terms.js')
  const { createRunProgress, printRunSummary, formatRetryWait } = await import('./run-progress.js')
  // One for the run: a secret an answer holds is masked in every later request --verbose prints.
  const secrets = (await import('../scenarios/seen-secrets.js')).createSeenSecrets()
  const shown = flags.json ? {} : createRunProgress(write)
  // A cancelled CI job still leaves its JUnit report, with the scenario it was stopped in.
  const onSignals = flags.junit ? (await import('./junit-on-signals.js')).writeJunitOnSignals({ file: flags.junit, scenarios, baseUrl: setup.server?.url ?? baseUrl ?? 'an in-process sandbox', startedServer: setup.server !== undefined || baseUrl === undefined, wait: waitForServerMs && baseUrl !== undefined && !setup.server ? flags.wait : undefined, formatJunitReport }, shown) : undefined
  const progress = onSignals?.hooks ?? shown
  // Where the tunnel must forward to: before the first scenario, which may wait on it.
  const note = out.createNoteWriter(flags.json, write)
  const onReceiverStart = ({ localUrl, publicUrl }: { localUrl: string; publicUrl?: string }) => {
    note(`webhook receiver listening on ${localUrl}${publicUrl ? `, expecting deliveries through ${publicUrl}/hooks/<run> (forward ${publicUrl}/* to ${localUrl})` : ''}`)
  }
  const report = await runScenarios(scenarios, {
    baseUrl,
    server: setup.server,
    signal: setup.signal,
    apiKey,
    bail: flags.bail,
    includeLocalOnly: flags.tag.includes('local-only') || args.length > 0,
    waitForServerMs,
    ...receiver,
    secrets,
    onReceiverStart,
    // Spec part 9: a breaking change is a new version. Said above the summary, where a failed run is read.
    // The version is the server's text: escaped, as every answer run prints is, so it cannot act on the terminal.
    onApiVersion: (version) => note(`the server answers api_version ${escapeControls(version)}; these scenarios are written for ${SCENARIOS_API_VERSION}, so a failure may be a change of the API (a newer partner-sandbox may know it)`),
    // The figures are the server's text too.
    onConfigDiffers: (differences) => note(escapeControls(describeConfigDifferences(differences))),
    ...progress,
    // A rate-limit wait can last minutes, and a server that never answers costs a timeout per
    // attempt: say so before each wait, or the run looks stuck (with --json on stderr, as stdout
    // holds only the report).
    transport: {
      timeoutMs: timeoutMs ?? RUN_TIMEOUT_MS,
      ...(flags.verbose ? { onAttempt: await createVerboseLog(flags.json ? (line) => process.stderr.write(`${line}\n`) : (line) => write(out.chalk.dim(line)), secrets) } : {}),
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
  const { describeRunStop } = await import('./run-stop.js')
  const stop = describeRunStop(report, { baseUrl, proxy, waitForServerMs, wait: flags.wait })
  // Before the closing summary, whose last line stays `N passed, N failed`.
  if (flags.githubReport) await (await import('./github-report.js')).reportToGithub(report, { json: flags.json, stopMessage: stop?.message })
  if (flags.json) {
    printJsonDocument(command, report, 2)
  } else printRunSummary(write, report)
  // After the summary: should the path break during the run, the results are still shown.
  if (flags.junit) await outputFile.writeOutputFile(flags.junit, formatJunitReport(report), 'the JUnit report')
  onSignals?.dispose()
  if (stop) throw stop
  if (report.failed > 0) throw new CliError(`${report.failed} of ${out.formatCount(report.scenarios.length, 'scenario')} failed`, { exitCode: 1, code: CliErrorCodes.FAILED })
}
