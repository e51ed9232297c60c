import type { Option } from 'commander'

/**
 * What an option's value names on disk, read from its flags: `<file>` a file, `<dir>` a
 * directory. The one place this is decided: `~` is expanded in these values (expand-home.ts) and
 * shell completion offers paths for them (completion/describe-commands.ts).
 */
export function readPathKind(option: Option): 'file' | 'dir' | undefined {
  const match = /<(file|dir)>/.exec(option.flags)
  return match ? (match[1] as 'file' | 'dir') : undefined
}
