import type { Command, Option } from 'commander'
import { CliError } from './cli-error.js'

/**
 * What an option's value names on disk, read from its flags: `<file>` a file, `<dir>` a
 * directory. The one place this is decided: `~` is expanded in these values (expand-home.ts) and
 * shell completion offers paths for them (completion/describe-commands.ts).
 */
export function readPathKind(option: Option): 'file' | 'dir' | undefined {
  const match = /<(file|dir)>/.exec(option.flags)
  return match ? (match[1] as 'file' | 'dir') : undefined
}

/** Where `-` would have been taken as standard output: the way to get that instead. */
const STDOUT_INSTEAD: Record<string, string> = { '--output': 'leave out --output to print to stdout' }

/**
 * Refuses `-` as the value of a path option or variable (SOURCE names it): no file option reads
 * standard input or writes standard output, and taken as a path `--output -` or `--junit -`
 * quietly wrote a file named "-" in the current directory.
 */
export function refuseDashPath(source: string, value: string | undefined, kind: 'file' | 'dir' = 'file'): void {
  if (value !== '-') return
  const instead = STDOUT_INSTEAD[source] ?? `give a ${kind === 'dir' ? 'directory' : 'file'} path`
  throw new CliError(`${source} -: "-" is no file, and standard input and output are not used for files; ${instead} (./- for one named "-")`)
}

/** Applies refuseDashPath to the values COMMAND's path options got on the command line. */
export function refuseDashPathOptions(command: Command): void {
  for (const option of command.options) {
    const name = option.attributeName()
    const kind = readPathKind(option)
    if (kind !== undefined && command.getOptionValueSource(name) === 'cli') refuseDashPath(option.long!, command.getOptionValue(name) as string | undefined, kind)
  }
}
