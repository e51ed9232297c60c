import type { Command } from 'commander'
import { CliErrorCodes } from '../errors/codes.js'
import { describeCommanderError } from './commander-messages.js'
import { formatJson } from './json-text.js'
import type { ListenError } from '../server/listen-errors.js'

/** Exit codes: 1 a check or scenario failed, 2 usage or setup error. */
export type ExitCode = 1 | 2

/**
 * The one error type commands throw: an actionable message printed without a stack, and the
 * exit code it ends the process with.
 */
export class CliError extends Error {
  readonly exitCode: ExitCode
  readonly code: string

  constructor(message: string, options: { exitCode?: ExitCode; code?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.name = 'CliError'
    this.exitCode = options.exitCode ?? 2
    this.code = options.code ?? CliErrorCodes.USAGE
  }
}

/** Setup failures from the library (bad config, keys file, data dir) become exit-2 CliErrors. */
export function toCliError(error: unknown): CliError | undefined {
  if (error instanceof CliError) return error
  const name = (error as Error | undefined)?.name
  if (name === 'SetupError' || name === 'StorageError' || name === 'KeysError') {
    return new CliError((error as Error).message, { code: name.replace('Error', '').toUpperCase(), cause: error })
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (isListenError(error)) return new CliError(describeListenError(error), { code, cause: error })
  // Under `ulimit -n 64` (a container's low limit) serve failed to load its own modules and
  // printed "unexpected error" with a stack: the fix is the limit, not a bug report. Which open
  // fails first depends on timing, and some wrap the system error as their cause.
  const limit = findCauseCode(error, ['EMFILE', 'ENFILE'])
  if (limit) {
    const system = limit.error === error ? '' : ` (${limit.error.message})`
    return new CliError(`too many open files (${(error as Error).message}${system}): raise the open-file limit (ulimit -n; serve needs about 100 to start, and one more per connection and webhook delivery in flight)`, { code: limit.code, cause: error })
  }
  // `sandbox openapi > spec.json` on a full disk failed at the write with "unexpected error" and
  // a stack: the disk is the user's to free, not a bug to report.
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new CliError(`cannot write: the disk is full or over its quota (${(error as Error).message}); free some space, or send the output elsewhere`, { code, cause: error })
  }
  return undefined
}

/**
 * ERROR or the first of its causes (a few deep) that is one of the system errors CODES, by its
 * code or, for an error passed on as text (the checkpoint thread's), by its message.
 */
function findCauseCode(error: unknown, codes: string[]): { error: Error; code: string } | undefined {
  let current = error as NodeJS.ErrnoException | undefined
  for (let depth = 0; current instanceof Error && depth < 5; depth++, current = current.cause as NodeJS.ErrnoException | undefined) {
    const code = typeof current.code === 'string' && codes.includes(current.code) ? current.code : codes.find((one) => new RegExp(`\\b${one}\\b`).test(current!.message))
    if (code) return { error: current, code }
  }
  return undefined
}

/** Whether ERROR is a ListenError (a busy, privileged or unsafe port, or a host this machine cannot listen on). */
export function isListenError(error: unknown): error is ListenError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'UNSAFE_PORT'
}

/**
 * A listen failure worded with the flags that fix it, when it says which port or host:
 * `portFlag` and `hostFlag` name where the port and the host came from (a flag, or SANDBOX_PORT
 * and SANDBOX_HOST when set in the environment, which is on no command line to look for).
 */
export function describeListenError(error: ListenError, portFlag = '--port', hostFlag = '--host'): string {
  if (error.code === 'EADDRINUSE' && typeof error.port === 'number') {
    return `port ${error.port} on ${error.host} is already in use; pick another with ${portFlag} (0 = any free port)`
  }
  if (error.code === 'EACCES' && typeof error.port === 'number') {
    // Worded for the system that refused it (createPortDeniedError): Windows has no privileged ports.
    const { why, instead } = error.denied ?? { why: 'needs privileges this process does not have (ports below 1024 are for root)', instead: 'pick one from 1024 up' }
    return `port ${error.port} on ${error.host} ${why}; ${instead} with ${portFlag} (0 = any free port)`
  }
  if (error.code === 'UNSAFE_PORT' && typeof error.port === 'number') {
    return `port ${error.port} is one that browsers and fetch() refuse to connect to (a blocked port of the fetch standard); pick another with ${portFlag} (0 = any free port)`
  }
  if (error.code === 'EADDRNOTAVAIL' && error.reason) {
    return `cannot listen on ${hostFlag} ${showHost(error.host)} (${error.reason}): give an address of this machine, e.g. 127.0.0.1, or 0.0.0.0 for every interface`
  }
  return error.message
}

/** HOST as typed, quoted when it is blank or holds spaces or control characters (escaped, not sent to the terminal). */
function showHost(host: string): string {
  return /^[\w.:%[\]-]+$/.test(host) ? host : JSON.stringify(host)
}

/**
 * A command whose `--json` promises one JSON document on stdout keeps that promise when it cannot
 * run at all: `{"error": {"code", "message"}}` instead of an empty stdout that a `jq` after it
 * would fail on. The message is the one stderr gets, as ever.
 */
const commands = new WeakSet<Command>()
/** Commands that have printed their document already: a later error must not add a second one. */
const printed = new WeakSet<Command>()

/** The document printed in place of the report. */
export function formatJsonError(code: string, message: string): string {
  return formatJson({ error: { code, message } }, 2)
}

/** Commands whose `--json` prints JSON lines, not one document, when this flag is given as well. */
const linesWith = new WeakMap<Command, string>()

/**
 * Whether FLAG is on the command line of COMMAND. Commander stops at the first bad value, so
 * in `--timeout abc --json` the flag is not parsed yet when the error is reported: the words are.
 */
function isGiven(command: Command, flag: string): boolean {
  let root = command
  while (root.parent) root = root.parent
  const words = (root as Command & { rawArgs?: string[] }).rawArgs ?? []
  const end = words.indexOf('--')
  return (end === -1 ? words : words.slice(0, end)).includes(flag)
}

/** Whether `--json` asks COMMAND for one document: given, and not with the flag that makes it JSON lines. */
function asksForJson(command: Command): boolean {
  const lines = linesWith.get(command)
  if (lines !== undefined && (command.getOptionValue(lines.slice(2)) === true || isGiven(command, lines))) return false
  return command.getOptionValue('json') === true || isGiven(command, '--json')
}

/**
 * From here on COMMAND prints JSON lines, not one document (`webhook deliveries --follow --json`,
 * as `logs --json`): no error document, and a signal ends it as the command decides.
 */
export function printJsonLinesInstead(command: Command): void {
  commands.delete(command)
}

/** Whether COMMAND's `--json` output is one document (printErrorsAsJson), not JSON lines. */
export function printsOneJsonDocument(command: Command): boolean {
  return commands.has(command)
}

/** Whether an error of COMMAND is reported as a JSON document on stdout (and none was printed yet). */
export function printsErrorsAsJson(command: Command): boolean {
  return commands.has(command) && !printed.has(command) && asksForJson(command)
}

function printJsonError(command: Command, code: string, message: string): void {
  if (!printsErrorsAsJson(command)) return
  printed.add(command)
  process.stdout.write(`${formatJsonError(code, message)}\n`)
}

/**
 * Makes COMMAND's `--json` print an error document for its own errors (see printCliErrorAsJson)
 * and for commander's parse errors (an unknown option, a missing value), as code USAGE. With
 * `linesWith` (a boolean flag such as `--follow`) given too, its output is JSON lines and it
 * prints no error document, as the other JSON-lines commands.
 */
export function printErrorsAsJson(command: Command, options: { linesWith?: string } = {}): Command {
  commands.add(command)
  if (options.linesWith !== undefined) linesWith.set(command, options.linesWith)
  const { outputError } = command.configureOutput()
  return command.configureOutput({
    outputError: (text, write) => {
      outputError ? outputError(text, write) : write(text)
      printJsonError(command, CliErrorCodes.USAGE, describeCommanderError(text))
    },
  })
}

/**
 * Prints VALUE as COMMAND's one JSON document on stdout (`space` as JSON.stringify's), after which
 * no error document follows it.
 */
export function printJsonDocument(command: Command, value: unknown, space?: number): void {
  process.stdout.write(`${formatJson(value, space)}\n`)
  printed.add(command)
}

/** Prints the error document for an error of COMMAND's action, when its `--json` asks for one. */
export function printCliErrorAsJson(command: Command, error: CliError): void {
  printJsonError(command, error.code, error.message)
}

/**
 * Prints the document for an error nobody anticipated (a bug): code INTERNAL_ERROR and the
 * error's message, so a `| jq` still reads why; the stack is for stderr.
 */
export function printUnexpectedErrorAsJson(command: Command, error: unknown): void {
  printJsonError(command, CliErrorCodes.INTERNAL_ERROR, error instanceof Error ? error.message : String(error))
}

/** Prints the document for a run that a signal stopped before its report. */
export function printInterruptedAsJson(command: Command, message: string): void {
  printJsonError(command, CliErrorCodes.INTERRUPTED, message)
}

/** Commands whose exit code is their verdict (a test run): a closed stdout must not change it. */
const verdicts = new WeakSet<Command>()

/**
 * Marks COMMAND's exit code as its verdict: when its stdout is closed (`| head`), it goes on
 * without output and ends with the code its result calls for, where other commands just stop.
 */
export function keepExitCodeWhenStdoutCloses(command: Command): Command {
  verdicts.add(command)
  return command
}

/** Whether COMMAND goes on to its own exit code after its stdout is closed. */
export function keepsExitCodeWhenStdoutCloses(command: Command): boolean {
  return verdicts.has(command)
}
