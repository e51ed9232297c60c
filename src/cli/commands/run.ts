import { Argument, Option, type Command } from 'commander'
import { canPrompt } from '../can-prompt.js'
import { CliError, keepExitCodeWhenStdoutCloses, printJsonDocument, printErrorsAsJson } from '../cli-error.js'
import { CliErrorCodes } from '../../errors/codes.js'
import { escapeControls } from '../../text/escape-controls.js'
import { suggestClosest } from '../../text/closest-match.js'
import { loadChosenScenarios } from '../load-chosen.js'
import { formatDuration, readDurationFlag } from '../duration-text.js'
import { addJsonOption, addReceiverOptions, resolveReceiverFlags } from '../options.js'
import { pickScenarios } from '../pick-scenarios.js'
import { hintValues } from '../completion/value-hints.js'
import { runChosen } from '../run-chosen.js'
import { suggestRepeatedFlag } from '../usage-hints.js'
import type { RunFlags, RunSetup } from '../run-setup.js'
import type { ScenarioFileError } from '../../scenarios/load-scenarios.js'
import type { Scenario } from '../../scenarios/scenario-schema.js'

/** A server started in the background is up in seconds, or minutes in a slow CI: an hour is plenty. */
const MAX_WAIT_MS = 3_600_000

async function runRun(args: string[], flags: RunFlags, command: Command): Promise<void> {
  let started = false
  try {
    await prepareAndRun(args, flags, command, () => { started = true })
  } catch (error) {
    // Exit 2 before any scenario ran: the report says why, rather than an earlier run's staying.
    const report = flags.junit !== undefined && !started && !flags.list && !flags.schema && !flags.watch
    if (report && error instanceof CliError && error.exitCode === 2 && error.code !== CliErrorCodes.OUTPUT) {
      await (await import('../junit-start-error.js')).writeJunitStartError(flags.junit!, error)
    }
    throw error
  }
}

/** `run` itself; ONSTART is called as the scenarios start, past every check that can stop them. */
async function prepareAndRun(args: string[], flags: RunFlags, command: Command, onStart: () => void): Promise<void> {
  if (flags.watch) (await import('../run-watch.js')).refuseWithWatch(flags)
  if (flags.schema) {
    refuseWithSchema(args, flags)
    const { buildScenarioJsonSchema } = await import('../../scenarios/scenario-json-schema.js')
    printJsonDocument(command, buildScenarioJsonSchema(), 2)
    return
  }
  let scenarios: Scenario[] = []
  let all: Scenario[] = []
  const out = await import('../output.js')
  const write = (line: string) => process.stdout.write(`${line}\n`)
  // With --watch the files are read at each run, and a broken one is told and waited on.
  if (!flags.watch) {
    const loaded = await loadChosenScenarios(args, flags.dir, flags.tag).catch(async (error: unknown) => {
      await annotateScenarioProblems(error, flags)
      throw error
    })
    const chosen = loaded.chosen
    all = loaded.all
    if (flags.list) {
      // A tag that selects nothing is a typo far more often than an empty answer to a question.
      if (chosen.length === 0 && flags.tag.length > 0) throw new CliError(noScenarioMessage(flags, all))
      if (flags.json) {
        printJsonDocument(command, chosen.map(({ id, name, description, tags, file }) => ({ id, name, description, tags, file })))
      }
      else for (const scenario of chosen) write(`${escapeControls(scenario.id).padEnd(28)} ${out.chalk.dim(scenario.tags.join(','))}  ${escapeControls(scenario.name)}`)
      return
    }
    scenarios = chosen
  } else await checkShippedChoice(args, flags)
  // Before the prompt: a bad flag is told at once, not after the scenarios are picked.
  // The checks `webhook trigger` and its kin make too: an http(s) URL without a password, a sendable sk_sandbox_ key.
  const { readApiKey, readBaseUrl } = await import('../api-target.js')
  const baseUrl = flags.startServer ? undefined : readBaseUrl(flags.baseUrl)
  const apiKey = readApiKey(flags.apiKey)
  const receiver = resolveReceiverFlags(flags)
  const waitForServerMs = readDurationFlag('--wait', flags.wait, MAX_WAIT_MS)
  const timeoutMs = readDurationFlag('--timeout', flags.timeout, MAX_WAIT_MS)
  if (!flags.watch) {
    const interactive = args.length === 0 && flags.tag.length === 0 && !flags.json && canPrompt()
    if (interactive) scenarios = await pickScenarios(all)
    if (scenarios.length === 0) throw new CliError(noScenarioMessage(flags, all))
  }
  const outputFile = await import('../output-file.js')
  // A CI job should learn of a bad report path before it waits for every scenario.
  if (flags.junit) await outputFile.prepareOutputFile(flags.junit, 'the JUnit report')
  const proxy = await (await import('../use-proxy.js')).useProxy(baseUrl, out.createNoteWriter(flags.json, write))
  const setup: RunSetup = { args, flags, command, baseUrl, apiKey, receiver, waitForServerMs, timeoutMs, proxy }
  onStart()
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
      const { all, chosen } = await loadChosenScenarios(args, flags.dir, flags.tag)
      if (chosen.length === 0) throw new CliError(noScenarioMessage(flags, all))
      return chosen
    },
    run: (chosen, server, say, signal) => runChosen(chosen, { ...setup, server, signal }, say),
  })
}

/**
 * `run --watch` on the shipped scenarios (no --dir): its ids and tags are checked once, before
 * anything starts, as `run` checks them. No save can fix a typo there, and the watch would wait
 * on the package's own directory for ever. Scenario files named may still be written: not read here.
 */
async function checkShippedChoice(args: string[], flags: RunFlags): Promise<void> {
  if (flags.dir !== undefined) return
  const { isScenarioFilePath } = await import('../../scenarios/load-scenarios.js')
  const ids = args.filter((arg) => !isScenarioFilePath(arg))
  const withFiles = ids.length < args.length
  if (withFiles && ids.length === 0) return
  // Beside a file, a tag may choose that file's scenario once it is written: only the ids count.
  const { all, chosen } = await loadChosenScenarios(ids, undefined, withFiles ? [] : flags.tag)
  if (chosen.length === 0) throw new CliError(noScenarioMessage(flags, all))
}

/** Under GitHub Actions, the problems of scenario files that did not load, at their lines in the pull request. */
async function annotateScenarioProblems(error: unknown, flags: RunFlags): Promise<void> {
  const cause = (error as Error | undefined)?.cause
  if (!flags.githubReport || !(cause instanceof Error) || cause.name !== 'ScenarioFileError') return
  const { reportProblemsToGithub } = await import('../github-report.js')
  await reportProblemsToGithub((cause as ScenarioFileError).problems, { json: flags.json })
}

/** Why nothing was chosen: with --tag, the tags there are (and the one a typo meant) or that the named scenarios lack it. */
function noScenarioMessage(flags: RunFlags, all: Scenario[]): string {
  // An empty --dir (a wrong path level, files not saved yet) said only "no scenarios to run".
  if (all.length === 0 && flags.dir !== undefined) return `no scenario files (*.json) in --dir ${flags.dir}`
  if (flags.tag.length === 0) return 'no scenarios to run'
  const known = [...new Set(all.flatMap((scenario) => scenario.tags))].sort()
  // `--tag smoke,webhooks`: --tag is repeated, not a comma list as `webhook register --events` is.
  for (const tag of flags.tag) {
    const repeated = suggestRepeatedFlag('--tag', tag, (item) => known.includes(item))
    if (repeated !== undefined) return `no scenario has the tag ${tag}: give one tag per --tag: ${repeated}`
  }
  if (flags.tag.some((tag) => known.includes(tag))) return `none of the scenarios named has the tag ${flags.tag.join(' or ')}`
  const tags = flags.tag.map((tag) => `${tag}${suggestClosest(tag, known)}`).join(' or ')
  return `no scenario has the tag ${tags}${known.length > 0 ? `; tags: ${known.join(', ')}` : ''}`
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
    .addArgument(hintValues(new Argument('[scenario...]', 'scenario ids (see --list) or paths to scenario .json files; default all'), { paths: 'file', source: 'scenario-ids', dirOption: '--dir' }))
    .addOption(new Option('--base-url <url>', 'server to test (env SANDBOX_BASE_URL); without one, an in-process server on a free port'))
    .addOption(new Option('--api-key <key>', 'API key for the scenarios (env SANDBOX_API_KEY); without one, a fresh key per scenario'))
    .addOption(new Option('--start-server', 'start an in-process server (memory storage) even when a base URL is set'))
    .addOption(new Option('--junit <file>', 'also write a JUnit XML report to FILE'))
    .addOption(new Option('--list', 'list the scenarios and exit'))
    .addOption(new Option('--schema', 'print the JSON Schema of scenario files (for editors; dist/scenario.schema.json in the package) and exit'))
    .addOption(new Option('--bail', 'stop after the first failed scenario'))
    .addOption(new Option('--watch', 'run again when a scenario file changes, cancelling a run in progress (Ctrl+C quits); the in-process server stays up between runs (with --api-key, a new one per run)'))
    .addOption(new Option('--verbose', 'print every request and answer: headers and bodies, the API key masked (on stderr with --json)'))
    .addOption(hintValues(new Option('--tag <tag>', 'only scenarios with this tag (repeatable)').argParser((value: string, previous: string[]) => [...previous, value]).default([], 'any'), { repeatable: true, source: 'scenario-tags', dirOption: '--dir' }))
    .addOption(new Option('--dir <dir>', 'directory of scenario files (default the shipped scenarios)'))
    .addOption(new Option('--wait <duration>', `wait up to DURATION (e.g. 30s, 1.5s or 500ms; at most ${formatDuration(MAX_WAIT_MS)}) for --base-url to answer, for a server started in the background`))
    .addOption(new Option('--timeout <duration>', `give up on an attempt of a request after DURATION, then retry (4 attempts in all; default 10s, at most ${formatDuration(MAX_WAIT_MS)})`))
    .addOption(new Option('--no-github-report', 'under GitHub Actions (GITHUB_ACTIONS=true), print no error annotations and write no job summary'))
  addReceiverOptions(command)
  addJsonOption(command, 'print one JSON report on stdout and nothing else (an error that stops the run: {"error": {"code", "message"}})')
  printErrorsAsJson(keepExitCodeWhenStdoutCloses(command)).action((args: string[], flags: RunFlags) => runRun(args, flags, command))
}
