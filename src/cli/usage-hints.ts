import type { Command } from 'commander'

/**
 * Words for commander's parse errors that need the command to be said well: commander's own
 * either suggested a look-alike that is something else (`keys revoke --key sk_...` was told "did
 * you mean --keys?", the keys file; `completion --shell bash`, "did you mean --help?").
 */

/** `sandbox keys revoke`: the command as typed, for a message. */
function describeCommandPath(command: Command): string {
  const names: string[] = []
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name())
  return names.join(' ')
}

/** The argument of COMMAND that an option named FLAG (`--key`, `--url`, `--scenarios`) stands for, if any. */
function findArgumentNamed(command: Command, flag: string): string | undefined {
  const word = flag.replace(/^--/, '').toLowerCase()
  return command.registeredArguments
    .map((argument) => argument.name())
    .find((name) => name === word || name.endsWith(`-${word}`) || word === `${name}s`)
}

/**
 * Commander's unknown-option MESSAGE (`error: unknown option '--key' (did you mean --keys?)`) for
 * COMMAND: when the option names one of its arguments, what to type instead of the suggestion.
 */
export function describeUnknownOption(command: Command, message: string): string {
  const flag = message.match(/unknown option '([^']+)'/)?.[1]
  const argument = flag === undefined ? undefined : findArgumentNamed(command, flag)
  if (argument === undefined) return message
  return `error: unknown option '${flag}': give the ${argument} as an argument, with no option before it (${describeCommandPath(command)} ${command.usage()})`
}

/** Makes every command under PROGRAM (itself included) word its parse errors with describeUnknownOption. */
export function hintUsageErrors(program: Command): void {
  const original = program.error.bind(program)
  program.error = (message, options) => original(options?.code === 'commander.unknownOption' ? describeUnknownOption(program, message) : message, options)
  for (const command of program.commands) hintUsageErrors(command)
}
