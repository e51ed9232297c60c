import type { Command, CommanderError, ErrorOptions } from 'commander'
import { isHttpUrl } from './http-url.js'

/**
 * Words for commander's parse errors that need the command to be said well: commander's own
 * either suggested a look-alike that is something else (`keys revoke --key sk_...` was told "did
 * you mean --keys?", the keys file; `completion --shell bash`, "did you mean --help?"), or named
 * no argument (`serve 4010`: "too many arguments for 'serve'. Expected 0 arguments but got 1.").
 */

/** `sandbox keys revoke`: the command as typed, for a message. */
function describeCommandPath(command: Command): string {
  const names: string[] = []
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name())
  return names.join(' ')
}

/** The argument of COMMAND that an option named FLAG (`--key`, `--url`, `--scenarios`) stands for, if any. */
function findArgumentNamed(command: Command, flag: string): string | undefined {
  const word = flag.replace(/^--/, '').replace(/=.*$/s, '').toLowerCase()
  return command.registeredArguments
    .map((argument) => argument.name())
    .find((name) => name === word || name.endsWith(`-${word}`) || word === `${name}s`)
}

/**
 * Commander's unknown-option MESSAGE (`error: unknown option '--key' (did you mean --keys?)`) for
 * COMMAND: when the option names one of its arguments, what to type instead of the suggestion.
 */
function describeUnknownOption(command: Command, message: string): string {
  const flag = message.match(/unknown option '([^']+)'/)?.[1]
  const argument = flag === undefined ? undefined : findArgumentNamed(command, flag)
  if (argument === undefined) return message
  return `error: unknown option '${flag}': give the ${argument} as an argument, with no option before it (${describeCommandPath(command)} ${command.usage()})`
}

/**
 * `--tag a --tag b` for VALUE given to the repeatable option FLAG as a comma list (`a,b`) whose
 * every item IS_KNOWN: `webhook register --events` takes such a list, and the habit carries over.
 * Undefined for anything else.
 */
export function suggestRepeatedFlag(flag: string, value: string, isKnown: (item: string) => boolean): string | undefined {
  const items = value.split(',').map((item) => item.trim())
  if (items.length < 2 || !items.every(isKnown)) return undefined
  return items.map((item) => `${flag} ${item}`).join(' ')
}

/** The options an argument of this shape is most often meant for, in the order they are offered. */
const OPTIONS_BY_SHAPE: Array<{ fits: (text: string) => boolean; flags: string[] }> = [
  { fits: (text) => /^\d+$/.test(text), flags: ['--port', '--tail'] },
  { fits: isHttpUrl, flags: ['--base-url', '--forward-to'] },
  { fits: (text) => /\.json$/i.test(text), flags: ['--output', '--config', '--keys', '--faults'] },
]

/** What a command that takes no file argument says instead (`webhook sign` reads standard input). */
const excessHints = new WeakMap<Command, (extra: string) => string>()

/** Makes COMMAND answer an argument too many with HINT (given that argument) rather than an option's name. */
export function hintExcessArgument(command: Command, hint: (extra: string) => string): Command {
  excessHints.set(command, hint)
  return command
}

/** "too many arguments for 'serve': "4010" (did you mean --port 4010?)": the arguments too many, and what they likely meant. */
function describeExcessArguments(command: Command): string {
  const extra = command.args.slice(command.registeredArguments.length)
  const head = `error: too many arguments for '${command.name()}': ${extra.map((arg) => JSON.stringify(arg)).join(' ')}`
  const usage = `${describeCommandPath(command)} ${command.usage()}`
  const [only] = extra
  if (extra.length !== 1 || only === undefined) return `${head} (${usage})`
  const hint = excessHints.get(command)
  if (hint) return `${head} (${hint(only)})`
  const own = new Set(command.options.map((option) => option.long))
  const flags = OPTIONS_BY_SHAPE.find((shape) => shape.fits(only))?.flags.filter((flag) => own.has(flag)) ?? []
  if (flags.length === 0) return `${head} (${usage})`
  return `${head} (did you mean ${flags.map((flag) => `${flag} ${only}`).join(' or ')}?)`
}

/**
 * An unknown option that commander had nothing to suggest for, held back until the commands not
 * loaded (only those the command line names are) tell whether one of them takes it: `run --port`
 * is `serve`'s. Thrown out of parsing; runCli reports it with reportUnknownOption.
 */
export class HeldUnknownOption extends Error {
  constructor(readonly command: Command, readonly flag: string, readonly report: (message: string) => never, readonly plain: string) {
    super(plain)
  }
}

/** Every command under PROGRAM (itself included) with its path (`sandbox webhook listen`). */
function listCommands(program: Command): Command[] {
  return [program, ...program.commands.flatMap((command) => listCommands(command))]
}

/**
 * Reports HELD as commander would (stderr, and the --json document), naming the commands of
 * PROGRAM, every command loaded, that take its option; returns the CommanderError it ends with.
 */
export function reportUnknownOption(held: HeldUnknownOption, program: Command): CommanderError {
  const path = describeCommandPath(held.command)
  const owners = listCommands(program)
    .filter((command) => command.options.some((option) => option.long === held.flag))
    .map((command) => describeCommandPath(command))
    .filter((owner) => owner !== path)
  const list = owners.length === 1 ? owners[0] : `${owners.slice(0, -1).join(', ')} and ${owners.at(-1)}`
  try {
    // `sandbox --port 0 serve`, `sandbox keys --keys FILE list`: the command's options go after its name.
    const where = held.command.commands.length === 0 ? `not of ${path}` : 'given after the command\'s name'
    return held.report(owners.length === 0 ? held.plain : `${held.plain}: an option of ${list}, ${where}`)
  } catch (error) {
    return error as CommanderError
  }
}

/** Makes every command under PROGRAM (itself included) word its parse errors as this module does. */
export function hintUsageErrors(program: Command): void {
  const original = program.error.bind(program)
  program.error = (message: string, options?: ErrorOptions) => {
    if (options?.code === 'commander.unknownOption') {
      const described = describeUnknownOption(program, message)
      // `--port=0` as commander quotes it: the option is the part before =.
      const flag = message.match(/^error: unknown option '(--[^'=]+)(?:=[^']*)?'$/)?.[1]
      if (described !== message || flag === undefined) return original(described, options)
      throw new HeldUnknownOption(program, flag, (text) => original(text, options), message)
    }
    if (options?.code === 'commander.excessArguments') return original(describeExcessArguments(program), options)
    return original(message, options)
  }
  for (const command of program.commands) hintUsageErrors(command)
}
