import { homedir } from 'node:os'
import { join } from 'node:path'
import type { Command } from 'commander'
import { CliError } from './cli-error.js'
import { readPathKind } from './path-options.js'

/**
 * The home directory, looked up only for a path that starts with `~`: with HOME unset, Node asks
 * the user database, and a container user with no passwd entry (`docker run --user 12345`) has
 * none, so os.homedir() throws. Every command once crashed there, `~` in its paths or not.
 */
function findHome(path: string, source: string | undefined): string {
  try {
    return homedir()
  } catch (error) {
    throw new CliError(`cannot expand ${source === undefined ? '' : `${source} `}${path}: no home directory (HOME is not set, and user ${process.getuid?.() ?? '?'} has no entry in the user database); set HOME or give the path without ~`, { cause: error })
  }
}

/**
 * PATH with a leading `~` (alone, or before a slash) in the home directory, as a shell would
 * have it. A shell leaves `--data-dir=~/x` alone, and so do compose files and CI settings with
 * `SANDBOX_DATA_DIR: ~/x`: taken as it is, that made a directory named `~` in the current one,
 * while the messages said `~/x`. `~user` is left as it is. `source`, the flag or variable PATH
 * came from, is named when there is no home to expand it in; `home` stands in for the real one.
 */
export function expandHome(path: string, { source, home }: { source?: string; home?: string } = {}): string {
  if (path === '~') return home ?? findHome(path, source)
  const slash = path.startsWith('~/') || (process.platform === 'win32' && path.startsWith('~\\'))
  return slash ? join(home ?? findHome(path, source), path.slice(2)) : path
}

/** Applies expandHome to the values of COMMAND's path options (those written `<file>` or `<dir>`). */
export function expandHomeInPathOptions(command: Command): void {
  for (const option of command.options) {
    const name = option.attributeName()
    const value: unknown = command.getOptionValue(name)
    if (readPathKind(option) !== undefined && typeof value === 'string') {
      command.setOptionValueWithSource(name, expandHome(value, { source: option.long }), command.getOptionValueSource(name)!)
    }
  }
}
