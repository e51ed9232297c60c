import type { Argument, Option } from 'commander'

/**
 * What shell completion offers for the value of an option or an argument, where that is known.
 * Attached where the option is defined, so the completion scripts cannot drift from the commands.
 * Paths need no hint: an option written `<file>` or `<dir>` completes paths (path-options.ts).
 */
export interface ValueHint {
  /** Whole values (`fs`, `memory`). */
  words?: readonly string[]
  /** Starts of values the user goes on typing (`redis://`): no space after them. */
  prefixes?: readonly string[]
  /**
   * Values looked up only when a script is generated (command modules must not load them): event
   * types, or the ids or tags of the shipped scenarios.
   */
  source?: 'event-types' | 'scenario-ids' | 'scenario-tags'
  /** Files and directories (an argument that names files, e.g. scenario files). */
  paths?: 'file' | 'dir'
  /**
   * An option (`--dir`) that, on the line, makes the shipped scenarios' ids or tags wrong: its
   * directory's ids are offered instead, and no tag (they are inside the files).
   */
  dirOption?: string
  /** The value is a list of these joined with this separator (`--events a,b`). */
  separator?: string
  /** The option may be given more than once (`--tag a --tag b`). */
  repeatable?: boolean
}

const hints = new WeakMap<Option | Argument, ValueHint>()

/** Attaches HINT to TARGET (an option or an argument) and returns TARGET, for chaining. */
export function hintValues<T extends Option | Argument>(target: T, hint: ValueHint): T {
  hints.set(target, hint)
  return target
}

/** The hint attached to TARGET, if any. */
export function readValueHint(target: Option | Argument): ValueHint | undefined {
  return hints.get(target)
}
