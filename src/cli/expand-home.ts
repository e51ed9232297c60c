import { homedir } from 'node:os'
import { join } from 'node:path'
import type { Command } from 'commander'

/**
 * PATH with a leading `~` (alone, or before a slash) in the home directory, as a shell would
 * have it. A shell leaves `--data-dir=~/x` alone, and so do compose files and CI settings with
 * `SANDBOX_DATA_DIR: ~/x`: taken as it is, that made a directory named `~` in the current one,
 * while the messages said `~/x`. `~user` is left as it is.
 */
export function expandHome(path: string, home: string = homedir()): string {
  if (path === '~') return home
  const slash = path.startsWith('~/') || (process.platform === 'win32' && path.startsWith('~\\'))
  return slash ? join(home, path.slice(2)) : path
}

/** Applies expandHome to the values of COMMAND's path options (those written `<file>` or `<dir>`). */
export function expandHomeInPathOptions(command: Command): void {
  for (const option of command.options) {
    const name = option.attributeName()
    const value: unknown = command.getOptionValue(name)
    if (/<(?:file|dir)>/.test(option.flags) && typeof value === 'string') {
      command.setOptionValueWithSource(name, expandHome(value), command.getOptionValueSource(name)!)
    }
  }
}
