import { readdirSync, statSync, watch } from 'node:fs'
import { basename, dirname, join, normalize, resolve } from 'node:path'
import { isLeftOutName } from './load-scenarios.js'

/** Calls `onEvent` with the name of each entry of DIR that is written, added, renamed or removed (null: unknown). */
export type WatchDirectory = (dir: string, onEvent: (name: string | null) => void) => { close(): void }

/** Watches a directory with fs.watch (not recursive). */
export const watchWithFs: WatchDirectory = (dir, onEvent) => {
  const watcher = watch(dir, (_event, name) => onEvent(name === null ? null : String(name)))
  // A directory deleted or made unreadable under the watch: the next load says what is wrong.
  watcher.on('error', () => {
    watcher.close()
    onEvent(null)
  })
  return watcher
}

/** How often a watched directory that was deleted is looked for (a watch needs one that exists). */
const REWATCH_POLL_MS = 500

/** The directory's inode, undefined when it is gone: a new one in its place is a new inode. */
const inodeOf = (path: string) => statSync(path, { throwIfNoEntry: false })?.ino

/** Names loadScenarios reads, or refuses loudly (a YAML scenario): editors' temp and swap files are not among them. */
const isScenarioName = (name: string) => /\.(json|ya?ml)$/i.test(name) && !isLeftOutName(name)

/**
 * Whether file names on PLATFORM are compared without case, as its default file system does
 * (APFS on macOS, NTFS on Windows). There a file given as `Loan.json` is `loan.json` on disk,
 * loads, and its events name `loan.json`: compared as given, no save was ever seen.
 */
function foldsCase(platform: NodeJS.Platform): boolean {
  return platform === 'darwin' || platform === 'win32'
}

/** What watchScenarioDirs watches, and whom it tells. */
export interface ScenarioDirsOptions {
  /** Scenario files named on the command line: their directories are watched for them alone. */
  files: string[]
  /** Directories whose every scenario file is watched. */
  dirs: string[]
  watchDirectory: WatchDirectory
  /** The system whose file names are compared (see foldsCase). */
  platform: NodeJS.Platform
  /** The watched files that exist: filled here with those present at start, kept by the caller after. */
  known: Set<string>
  /** Told the files (as given: a named file, or a directory joined with a name) that may have changed. */
  onFiles(files: string[]): void
}

/**
 * Watches the directories of scenario files: a directory itself (fs.watch, not recursive), and
 * each named file's directory, so a save through a rename is seen where a watch on the file would
 * lose it. A watched directory deleted is watched again when it is back. Throws when a directory
 * cannot be watched at start, having closed what it opened.
 */
export function watchScenarioDirs(options: ScenarioDirsOptions): { close(): void } {
  const { known, onFiles } = options
  // Per watched directory (resolved), its path as given and which names in it count (undefined:
  // every scenario name), each under its folded form and as given.
  const fold = foldsCase(options.platform) ? (name: string) => name.toLowerCase() : (name: string) => name
  const targets = new Map<string, { dir: string; names?: Map<string, string> }>()
  for (const dir of options.dirs) targets.set(resolve(dir), { dir: normalize(dir) })
  for (const file of options.files) {
    const dir = dirname(normalize(file))
    const target = targets.get(resolve(dir)) ?? { dir, names: new Map<string, string>() }
    target.names?.set(fold(basename(file)), basename(file))
    targets.set(resolve(dir), target)
  }
  const watchers = new Set<{ close(): void }>()
  // Timers of directories that are gone, each looking for its directory to come back.
  const polls = new Set<NodeJS.Timeout>()
  let closed = false
  const close = () => {
    closed = true
    for (const poll of polls) clearTimeout(poll)
    for (const watcher of watchers) watcher.close()
  }

  for (const [path, target] of targets) {
    const counts = (name: string) => (target.names ? target.names.has(fold(name)) : isScenarioName(name))
    // A named file's name as given, whatever case the system reports it in.
    const asGiven = (name: string) => target.names?.get(fold(name)) ?? name
    const list = () => {
      try {
        return readdirSync(path).filter(counts).map(asGiven)
      } catch {
        return []
      }
    }
    // Compared resolved: `--dir sc/` (as TAB completes it) names its files sc/a.json, whose dirname is sc.
    const knownNames = () => [...known].filter((file) => resolve(dirname(file)) === path).map((file) => basename(file))
    const touch = (names: string[]) => onFiles(names.filter(counts).map((name) => join(target.dir, asGiven(name))))
    const start = () => {
      const inode = inodeOf(path)
      const watcher = options.watchDirectory(path, (name) => {
        if (!watchers.has(watcher)) return
        // Some platforms give no name: every file of the target may have changed.
        touch(name ? [name] : [...list(), ...knownNames()])
        if (inodeOf(path) === inode) return
        // The directory deleted or replaced (rm -rf, a checkout, a copy back): a watch holds the
        // one that is gone, so it is dropped and the directory watched again once it is back.
        watcher.close()
        watchers.delete(watcher)
        touch(knownNames())
        awaitReturn()
      })
      watchers.add(watcher)
    }
    const awaitReturn = () => {
      if (closed) return
      if (inodeOf(path) !== undefined) {
        try {
          start()
          touch(list())
          return
        } catch {
          // Gone again before it could be watched: the next look finds out.
        }
      }
      const poll = setTimeout(() => {
        polls.delete(poll)
        awaitReturn()
      }, REWATCH_POLL_MS)
      polls.add(poll)
    }
    for (const name of list()) known.add(join(target.dir, name))
    try {
      start()
    } catch (error) {
      close()
      throw error
    }
  }
  return { close }
}
