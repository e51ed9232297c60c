import { statSync } from 'node:fs'
import { dirname } from 'node:path'
import { CliError, toCliError } from './cli-error.js'
import { drainOutput } from './drain-output.js'
import { escapeControls } from '../text/escape-controls.js'
import { onStopSignals, toSignalExitCode } from './stop-signals.js'
import type { RunServer } from '../scenarios/run-server.js'
import type { Scenario } from '../scenarios/scenario-schema.js'
import type { RoundCancelledError } from '../scenarios/round-cancelled.js'
import type { ScenarioChange, ScenarioWatch } from '../scenarios/watch-scenarios.js'

type Write = (line: string) => void

/** What `run --watch` watches, and how `run` loads and runs (the command's flags, applied). */
export interface WatchRunOptions {
  files: string[]
  dirs: string[]
  /** The server each run goes to; without one an in-process server is started once, for every run. */
  baseUrl?: string
  /**
   * Each run without a base URL starts an in-process server of its own, as `run` does: with one
   * `--api-key` for every run, a server kept up would hand the key's loans and wallet of one run
   * to the next, and a scenario that passes on its own would fail on the second save.
   */
  serverPerRun?: boolean
  /** The scenarios the command line chooses, read again; throws a CliError for a broken file. */
  load(): Promise<Scenario[]>
  /**
   * One run, printing with WRITE; throws a CliError when it failed or stopped on setup, and
   * `signal.reason` when SIGNAL aborted it (a save or Enter during the run, or the watch stopping).
   */
  run(scenarios: Scenario[], server: RunServer | undefined, write: Write, signal: AbortSignal): Promise<void>
}

/** Flags that end with one document or a file, or leave nothing to watch: none go with --watch. */
const NOT_WITH_WATCH = ['json', 'junit', 'list', 'schema'] as const

/** `run --watch` with a flag it cannot go with, or under GitHub Actions: a usage error (exit 2). */
export function refuseWithWatch(flags: Partial<Record<(typeof NOT_WITH_WATCH)[number], unknown>>): void {
  const other = NOT_WITH_WATCH.find((flag) => flags[flag])
  if (other) throw new CliError(`--watch cannot be used with --${other}: it runs again on every change and never ends; run without --watch for ${other === 'junit' ? 'a JUnit report' : other === 'json' ? 'a JSON report' : `--${other}`}`)
  // A job whose step never ends holds its runner until the job's timeout (6 hours by default).
  if (process.env.GITHUB_ACTIONS === 'true') throw new CliError('--watch never ends, and under GitHub Actions (GITHUB_ACTIONS=true) it would hold the job until its timeout: run without --watch in CI')
}

/** A path that cannot be watched is a usage error, before anything starts. */
function checkTargets({ files, dirs }: WatchRunOptions): void {
  const stat = (path: string, missing: string) => {
    try {
      return statSync(path)
    } catch {
      throw new CliError(missing)
    }
  }
  for (const dir of dirs) {
    if (!stat(dir, `--dir ${dir}: no such directory`).isDirectory()) throw new CliError(`--dir ${dir} is not a directory (give scenario files as arguments, or the directory that holds them)`)
  }
  // A named file may be missing for now (saved later): its directory is what is watched.
  for (const file of files) stat(dirname(file), `no such file or directory: ${file}`)
}

const show = (text: string) => escapeControls(text)

/** `draft.json changed, new.json added` (or `rerun`, asked for). */
function describeChanges(changes: ScenarioChange[]): string {
  if (changes.length === 0) return 'rerun'
  const shown = changes.slice(0, 3).map((change) => `${show(change.file)} ${change.change}`)
  return `${shown.join(', ')}${changes.length > 3 ? ` and ${changes.length - 3} more` : ''}`
}

function describeScenarios(scenarios: Scenario[]): string {
  const count = `${scenarios.length} ${scenarios.length === 1 ? 'scenario' : 'scenarios'}`
  return scenarios.length > 6 ? count : `${count}: ${scenarios.map((scenario) => show(scenario.id)).join(', ')}`
}

/**
 * `sandbox run --watch`: runs, then runs again on each change to the scenario files, until
 * SIGINT, SIGTERM, SIGHUP (its terminal closed), `q` or its stdout closed. Like `serve` and `webhook listen`, whose normal end is also a signal,
 * it then says it stopped and exits 0 (the in-process server stopped first); a second signal
 * while it stops exits at once with the signal's code, as serve's does.
 */
export async function watchRun(options: WatchRunOptions): Promise<never> {
  checkTargets(options)
  const out = await import('./output.js')
  const { watchScenarios } = await import('../scenarios/watch-scenarios.js')
  const { isCancelledBy } = await import('../scenarios/round-cancelled.js')
  const { startRunServer } = await import('../scenarios/run-server.js')
  const { listenForWatchKeys } = await import('./watch-keys.js')
  // Once stopping, a run still going (cancelled by watch.close(), not waited for) prints nothing more.
  let stopping = false
  const write = (line: string) => { if (!stopping) process.stdout.write(`${line}\n`) }
  // As main.ts reports a CliError: the message alone, no stack; anything else is a bug, and ends the watch.
  const report = (error: unknown) => {
    const known = toCliError(error)
    if (!known) throw error
    if (!stopping) process.stderr.write(`sandbox: ${escapeControls(known.message, { keepNewlines: true })}\n`)
  }
  let quit!: (how: string) => void
  const quitting = new Promise<string>((resolve) => { quit = resolve })
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(toSignalExitCode(signal))
    quit(signal)
  }
  const offSignals = onStopSignals(onSignal)
  // `run --watch | head`: with the reader gone no run can be seen, and nothing else would end the
  // watch (run goes on after EPIPE for its exit code, which a watch has not). Found at a write.
  const onStdoutError = (error: NodeJS.ErrnoException) => { if (error.code === 'EPIPE') quit('stdout closed') }
  process.stdout.on('error', onStdoutError)
  let server: RunServer | undefined
  let watch: ScenarioWatch | undefined
  let stopKeys: (() => void) | undefined
  const stop = async () => {
    stopping = true
    stopKeys?.()
    void watch?.close()
    await server?.close()
  }
  try {
    server = options.baseUrl === undefined && !options.serverPerRun ? await startRunServer() : undefined
    if (server) write(out.chalk.dim(`in-process server on ${server.url} (memory storage), kept up between runs`))
    else if (options.baseUrl === undefined) write(out.chalk.dim('in-process server: a new one for each run (with --api-key, one kept up would carry the key\'s loans and wallet into the next run)'))
    const keys = Boolean(process.stdin.isTTY)
    const targets = [...options.dirs.map((dir) => `${dir.replace(/\/+$/, '')}/`), ...options.files].map(show).join(', ')
    let first = true
    watch = watchScenarios({
      files: options.files,
      dirs: options.dirs,
      load: options.load,
      run: async (scenarios, changes, signal) => {
        if (!first) write(`\n${describeChanges(changes)}: running ${describeScenarios(scenarios)}`)
        first = false
        await options.run(scenarios, server, write, signal).catch((error: unknown) => {
          if (!isCancelledBy(error, signal)) return report(error)
          // Cut off, not failed: one line instead of a report. Stopping says so itself.
          const why = signal.reason as RoundCancelledError
          if (!why.closing) write(`${describeChanges(why.changes)}: run cancelled`)
        })
      },
      onLoadError: (error, changes) => {
        if (!first) write(`\n${describeChanges(changes)}`)
        first = false
        report(error)
      },
      onIdle: () => write(out.chalk.dim(`\nwatching ${targets} for changes; ${keys ? 'Enter runs again, q then Enter quits' : 'Ctrl+C quits'}`)),
    })
    if (keys) stopKeys = listenForWatchKeys(process.stdin, { rerun: () => watch?.rerun(), quit: () => quit('q') })
    const how = await Promise.race([quitting, watch.done.then(() => 'closed')])
    await stop()
    process.stdout.write(`watch stopped (${how})\n`)
    await drainOutput()
    process.exit(0)
  } finally {
    // Reached only on an error: a server that could not start, or a bug in a run.
    await stop()
    offSignals()
    process.stdout.off('error', onStdoutError)
  }
}
