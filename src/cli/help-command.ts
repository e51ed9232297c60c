import type { Command } from 'commander'

/**
 * `sandbox help webhook verify` as `sandbox webhook verify --help`. Commander answers a `help`
 * naming a command it does not know with the whole help on stderr, never naming the word, and
 * `help webhook nope` with the group's help and exit 0; here the unknown word is run as a command,
 * so it gets the unknown-command error, its suggestion and exit 2.
 */
export function rewriteHelpCommand(program: Command, argv: string[]): string[] {
  const args = argv.slice(2)
  const groups = walkCommands(program, args, 0)
  if (args[groups.at] !== 'help' || groups.at + 1 >= args.length) return argv
  if (groups.command.commands.some((command) => command.name() === 'help')) return argv
  const named = walkCommands(groups.command, args, groups.at + 1)
  const path = [...args.slice(0, groups.at), ...args.slice(groups.at + 1, named.at)]
  // A word that names no command of a group: run it, for commander's own unknown-command error.
  if (named.command.commands.length > 0 && named.at < args.length) return [...argv.slice(0, 2), ...path, args[named.at]!]
  return [...argv.slice(0, 2), ...path, '--help']
}

/** Follows `args` from `at` through subcommands; stops at the first word that names none. */
function walkCommands(from: Command, args: string[], at: number): { command: Command; at: number } {
  let command = from
  let index = at
  for (; index < args.length; index += 1) {
    const word = args[index]!
    const next = command.commands.find((candidate) => candidate.name() === word || candidate.aliases().includes(word))
    if (!next) break
    command = next
  }
  return { command, at: index }
}
