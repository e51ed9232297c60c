import { Command, CommanderError, Help, type Option } from 'commander'
import { CliError, keepsExitCodeWhenStdoutCloses, printCliErrorAsJson, printsErrorsAsJson, printUnexpectedErrorAsJson, toCliError } from './cli-error.js'
import { describeCommanderError } from './commander-messages.js'
import { drainOutput } from './drain-output.js'
import { escapeControls } from '../text/escape-controls.js'
import { expandHomeInPathOptions } from './expand-home.js'
import { rewriteHelpCommand } from './help-command.js'
import { HeldUnknownOption, hintUsageErrors, reportUnknownOption } from './usage-hints.js'
import { refuseDashPathOptions } from './path-options.js'
import { readThisPackage } from '../files/describe-this-version.js'
import { holdSignalsWhileLoading, releaseHeldSignal } from './held-signals.js'
import { endOnSignalsAsInit } from './init-signals.js'
import { printDocumentOnSignals } from './json-signals.js'
import { COMMANDS, GROUPS, type CommandEntry } from './registry.js'
import { toSignalExitCode } from './stop-signals.js'
import { endByHangupOnceTerminalGone } from './terminal-gone.js'

/** The command whose action ran (or was about to): its errors are reported the way it reports. */
let activeCommand: Command | undefined

/**
 * Builds the commander program from the registry. With `argv`, only the commands it names are
 * loaded; the others are listed from the registry alone. Without, every command is loaded.
 */
export async function createProgram(argv?: string[]): Promise<Command> {
  const words = argv ? new Set(argv.slice(2)) : undefined
  const stubUsage = new WeakMap<Command, string>()
  const program = new Command('sandbox')
    .description('Local, stateful sandbox of the BTC-backed lending partner API')
    .version(readThisPackage().version, '-v, --version')
    .showHelpAfterError('(run with --help for usage)')
    // Inherited by every command made after this: parse errors read as the CLI's own.
    .configureOutput({ outputError: (text, write) => write(`sandbox: ${escapeControls(describeCommanderError(text), { keepNewlines: true })}\n`) })
    .configureHelp({
      subcommandTerm(this: Help, command: Command) {
        const usage = stubUsage.get(command)
        return usage === undefined ? Help.prototype.subcommandTerm.call(this, command) : `${command.name()} ${usage}`
      },
      // Defaults in one form, `default X`, whether commander adds them or a description names one.
      optionDescription(this: Help, option: Option) {
        return Help.prototype.optionDescription.call(this, option).replace(/\(([^()]*)default: /, '($1default ')
      },
    })
    .exitOverride()
    .hook('preAction', (_program, action) => {
      activeCommand = action
      const held = releaseHeldSignal()
      if (printsErrorsAsJson(action)) printDocumentOnSignals(action)
      // Sent again now that the command answers it (or, without a handler, ends by it as usual).
      if (held) process.kill(process.pid, held)
      refuseEmptyValues(action)
      refuseDashPathOptions(action)
      expandHomeInPathOptions(action)
    })
  const add = async (parent: Command, entry: CommandEntry, named: boolean) => {
    if (named) return (await entry.load())(parent)
    stubUsage.set(parent.command(entry.name).description(entry.summary), entry.usage)
  }
  for (const entry of COMMANDS) await add(program, entry, !words || words.has(entry.name))
  for (const group of GROUPS) {
    const command = program.command(group.name).description(group.description).exitOverride()
    for (const entry of group.commands) await add(command, entry, !words || (words.has(group.name) && words.has(entry.name)))
  }
  for (const command of program.commands) command.exitOverride()
  hintUsageErrors(program)
  return program
}

/**
 * `--config ""` (often `--config "$CONFIG"` with the variable unset) would otherwise fall back to
 * the default in silence; no option of ours takes an empty value.
 */
function refuseEmptyValues(command: Command): void {
  for (const option of command.options) {
    const name = option.attributeName()
    if (option.required && command.getOptionValueSource(name) === 'cli' && command.getOptionValue(name) === '') {
      throw new CliError(`${option.long} needs a value, got an empty string`)
    }
  }
}

async function exitAfterOutput(code: number): Promise<never> {
  await drainOutput()
  process.exit(code)
}

/** Set once an error is being reported: a second one (a write failing meanwhile) exits at once. */
let failing = false

async function fail(error: unknown, command: Command | undefined): Promise<never> {
  if (failing) process.exit(1)
  failing = true
  const name = (error as Error | undefined)?.name
  // A prompt closed by Ctrl+C, or aborted by a signal (prompt-signals.ts): the signal's exit code.
  if (name === 'ExitPromptError' || name === 'AbortPromptError') process.exit(toSignalExitCode((error as Error).cause))
  const known = toCliError(error)
  if (known) {
    process.stderr.write(`sandbox: ${escapeControls(known.message, { keepNewlines: true })}\n`)
    if (command) printCliErrorAsJson(command, known)
    return exitAfterOutput(known.exitCode)
  }
  process.stderr.write(`sandbox: unexpected error\n${(error as Error)?.stack ?? String(error)}\n`)
  if (command) printUnexpectedErrorAsJson(command, error)
  return exitAfterOutput(1)
}

/**
 * `sandbox ... | head` closes the pipe early: that is the reader's choice, not a crash, so the
 * command stops with 0. Not a command whose exit code is its verdict: `sandbox run | head -1`
 * must still fail a CI step when a scenario fails, so it goes on without output (each later
 * write fails with EPIPE again, and is ignored here) and ends with its own code.
 */
function onStdoutError(error: NodeJS.ErrnoException): void {
  // A terminal gone (closed window, dropped ssh session): its SIGHUP stops the command, whose
  // last lines have nowhere to go. Thrown, the stop would end as an unexpected error, unflushed.
  if (error.code === 'EIO') return
  if (error.code !== 'EPIPE') throw error
  if (activeCommand && keepsExitCodeWhenStdoutCloses(activeCommand)) return
  process.exit(0)
}

/** Stderr on a terminal that is gone, as stdout (onStdoutError). */
function onStderrError(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EIO') throw error
}

/** Runs the CLI with process.argv-style arguments. */
export async function runCli(argv: string[]): Promise<void> {
  endOnSignalsAsInit()
  holdSignalsWhileLoading(argv)
  endByHangupOnceTerminalGone()
  if (process.stdout.listenerCount('error') === 0) process.stdout.on('error', onStdoutError)
  if (process.stderr.listenerCount('error') === 0) process.stderr.on('error', onStderrError)
  // A throw outside the action's promise chain (an event handler, a timer) is a bug like any other.
  if (process.listenerCount('uncaughtException') === 0) process.on('uncaughtException', (error) => void fail(error, activeCommand))
  if (process.listenerCount('unhandledRejection') === 0) process.on('unhandledRejection', (error) => void fail(error, activeCommand))
  activeCommand = undefined
  failing = false
  const program = await createProgram(argv)
  try {
    await program.parseAsync(rewriteHelpCommand(program, argv))
  } catch (thrown) {
    // Every command loaded, to name those that take the option (only on this error's path).
    const error = thrown instanceof HeldUnknownOption ? reportUnknownOption(thrown, await createProgram()) : thrown
    if (error instanceof CommanderError) {
      // Help and version are successes; every other parse error is a usage error.
      process.exit(error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? 0 : 2)
    }
    await fail(error, activeCommand)
  }
}
