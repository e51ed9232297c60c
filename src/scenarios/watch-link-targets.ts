import { realpathSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { WatchDirectory } from './watch-scenario-dirs.js'

/** The watch on where scenario files that are symbolic links point. */
export interface LinkTargetWatch {
  /** Watches the targets of those of FILES that are links (again: a link may have moved). */
  update(files: Iterable<string>): void
  close(): void
}

/** Where FILE leads when it is itself a symbolic link; undefined for a plain (or missing) file. */
function findLinkTarget(file: string): string | undefined {
  try {
    const real = realpathSync(file)
    // Against the directory's own real path: a link above it (/tmp on macOS) makes no file a link.
    return real === join(realpathSync(dirname(file)), basename(file)) ? undefined : real
  } catch {
    return undefined
  }
}

/**
 * A scenario that is a link into another directory (a file shared between projects) is saved
 * there, and a watch on the link's directory sees nothing of it: the target's directory is
 * watched too, and a change to the target is told as one to each link that leads to it.
 */
export function watchLinkTargets(watchDirectory: WatchDirectory, onChange: (files: string[]) => void): LinkTargetWatch {
  // Per directory links lead into: its watch, and per name in it the links that lead there.
  const watched = new Map<string, { close(): void; links: Map<string, string[]> }>()
  const close = () => {
    for (const entry of watched.values()) entry.close()
    watched.clear()
  }
  return {
    update(files) {
      const wanted = new Map<string, Map<string, string[]>>()
      for (const file of files) {
        const target = findLinkTarget(file)
        if (target === undefined) continue
        const links = wanted.get(dirname(target)) ?? new Map<string, string[]>()
        links.set(basename(target), [...(links.get(basename(target)) ?? []), file])
        wanted.set(dirname(target), links)
      }
      for (const [dir, entry] of watched) {
        if (!wanted.has(dir)) {
          entry.close()
          watched.delete(dir)
        }
      }
      for (const [dir, links] of wanted) {
        const entry = watched.get(dir)
        if (entry) {
          entry.links = links
          continue
        }
        try {
          const created = { links, close: () => {} }
          const watcher = watchDirectory(dir, (name) => {
            const changed = name === null ? [...created.links.values()].flat() : created.links.get(name)
            if (changed) onChange(changed)
          })
          created.close = () => watcher.close()
          watched.set(dir, created)
        } catch {
          // A target directory that cannot be watched: the link's own directory still is.
        }
      }
    },
    close,
  }
}
