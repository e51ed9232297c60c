/**
 * The command tree as shell completion sees it: plain data, so that each shell's renderer is a
 * pure function of it (describe-commands.ts builds it from the commander program).
 */

/** What a value may be completed with. Empty (no words, no prefixes, no paths) means nothing. */
export interface ValueSpec {
  words: string[]
  /** Starts of values (`redis://`), completed without a space after them. */
  prefixes: string[]
  paths?: 'file' | 'dir'
  /** A list of values joined by this (`a,b`): each item completes. */
  separator?: string
  /**
   * With this option on the line, `words` give way to its directory's: the names of the
   * `*.json` files in it less `.json`, those starting with `_` or `.` left out, as `run --dir`
   * leaves them out (`ids`), or none.
   */
  dirWords?: { option: string; ids: boolean }
}

/** An option: its flags (`-v`, `--version`), and its value when it takes one. */
export interface OptionSpec {
  flags: string[]
  description: string
  /** `<value>` is required, `[value]` optional; absent for a flag. */
  value?: { name: string; required: boolean; spec: ValueSpec }
  repeatable: boolean
}

/** A positional argument. */
export interface ArgumentSpec {
  name: string
  description: string
  required: boolean
  variadic: boolean
  spec: ValueSpec
}

/** A command (the root is the program), with its subcommands when it is a group. */
export interface CommandSpec {
  name: string
  description: string
  options: OptionSpec[]
  arguments: ArgumentSpec[]
  commands: CommandSpec[]
}

/** Whether SPEC offers anything to complete. */
export function hasValues(spec: ValueSpec): boolean {
  return spec.words.length > 0 || spec.prefixes.length > 0 || spec.paths !== undefined
}

/** Every command of TREE with its path of names below the root (`['webhook', 'trigger']`), root first. */
export function listCommands(tree: CommandSpec): { path: string[]; command: CommandSpec }[] {
  const found: { path: string[]; command: CommandSpec }[] = []
  const visit = (command: CommandSpec, path: string[]) => {
    found.push({ path, command })
    for (const child of command.commands) visit(child, [...path, child.name])
  }
  visit(tree, [])
  return found
}
