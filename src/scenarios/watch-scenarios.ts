import { existsSync, readdirSync, statSync, watch } from 'node:fs'
import { basename, dirname, join, normalize, resolve } from 'node:path'
import { isLeftOutName } from './load-scenarios.js'
import { watchLinkTargets } from './watch-link-targets.js'

/** One scenario file that changed since the last round. */
export interface ScenarioChange {
  /** As given: a file argument, or the watched directory joined with the file's name. */
  file: string
  change: 'added' | 'changed' | 'removed'
}

/** What watchScenarios watches, and what it does on a change. */
export interface WatchScenariosOptions<T> {
  /** Scenario files to watch (those named on the command line). */
  files?: string[]
  /** Directories whose scenario files are watched, new, renamed and deleted ones included. */
  dirs?: string[]
  /** Reads the scenarios; a throw is a broken file, told to `onLoadError`, and the watch goes on. */
  load(): Promise<T>
  /** Runs what `load` gave. `changes` is empty for the first round and a rerun asked for. */
  run(loaded: T, changes: ScenarioChange[]): Promise<void>
  /** Tells why `load` failed (a throw from here ends the watch, as one from `run` does). */
  onLoadError(error: unknown, changes: ScenarioChange[]): void
  /** After each round, when nothing more is waiting to run. */
  onIdle?(): void
  /** How long the files must stay quiet before a round starts (default WATCH_DEBOUNCE_MS). */
  debounceMs?: number
  /** How a directory is watched: fs.watch by default (tests pass a fake). */
  watchDirectory?: WatchDirectory
  /** The system whose file names are compared (default process.platform; see foldsCase). */
  platform?: NodeJS.Platform
}

/**
 * Whether file names on PLATFORM are compared without case, as its default file system does
 * (APFS on macOS, NTFS on Windows). There a file given as `Loan.json` is `loan.json` on disk,
 * loads, and its events name `loan.json`: compared as given, no save was ever seen.
 */
function foldsCase(platform: NodeJS.Platform): boolean {
  return platform === 'darwin' || platform === 'win32'
}

/** Calls `onEvent` with the name of each entry of DIR that is written, added, renamed or removed (null: unknown). */
export type WatchDirectory = (dir: string, onEvent: (name: string | null) => void) => { close(): void }

const watchWithFs: WatchDirectory = (dir, onEvent) => {
  const watcher = watch(dir, (_event, name) => onEvent(name === null ? null : String(name)))
  // A directory deleted or made unreadable under the watch: the next load says what is wrong.
  watcher.on('error', () => {
    watcher.close()
    onEvent(null)
  })
  return watcher
}

/** A running watch. */
export interface ScenarioWatch {
  /** Runs again as a change would: now, or once the round in progress has ended. */
  rerun(): void
  /** Stops watching; resolves once the round in progress, if any, has ended. */
  close(): Promise<void>
  /** Resolves when closed; rejects with what `run` or `onLoadError` threw, which closes the watch. */
  readonly done: Promise<void>
}

/**
 * Editors save in steps (truncate then write, or a temp file renamed over the scenario): events
 * closer together than this are one change, so a save runs once and never on a half-written file.
 */
export const WATCH_DEBOUNCE_MS = 150

/** How often a watched directory that was deleted is looked for (a watch needs one that exists). */
const REWATCH_POLL_MS = 500

/** The directory's inode, undefined when it is gone: a new one in its place is a new inode. */
const inodeOf = (path: string) => statSync(path, { throwIfNoEntry: false })?.ino

/** Names loadScenarios reads, or refuses loudly (a YAML scenario): editors' temp and swap files are not among them. */
const isScenarioName = (name: string) => /\.(json|ya?ml)$/i.test(name) && !isLeftOutName(name)

/**
 * Runs `load` then `run` once, then again after each change to the watched scenario files, one
 * round at a time: a change during a round queues exactly one more. A directory is watched
 * itself (fs.watch, not recursive), and so is each file's directory, so a save through a rename
 * is seen where a watch on the file would lose it; a watched directory deleted is watched again
 * when it is back.
 */
export function watchScenarios<T>(options: WatchScenariosOptions<T>): ScenarioWatch {
  const debounceMs = options.debounceMs ?? WATCH_DEBOUNCE_MS
  // Per watched directory (resolved), its path as given and which names in it count (undefined:
  // every scenario name), each under its folded form and as given.
  const fold = foldsCase(options.platform ?? process.platform) ? (name: string) => name.toLowerCase() : (name: string) => name
  const targets = new Map<string, { dir: string; names?: Map<string, string> }>()
  for (const dir of options.dirs ?? []) targets.set(resolve(dir), { dir: normalize(dir) })
  for (const file of options.files ?? []) {
    const dir = dirname(normalize(file))
    const target = targets.get(resolve(dir)) ?? { dir, names: new Map<string, string>() }
    target.names?.set(fold(basename(file)), basename(file))
    targets.set(resolve(dir), target)
  }
  const known = new Set<string>()
  const pending = new Set<string>()
  let queued: Map<string, ScenarioChange> | undefined
  let timer: NodeJS.Timeout | undefined
  let round: Promise<void> | undefined
  let closed = false
  let settle!: { resolve(): void; reject(error: unknown): void }
  const done = new Promise<void>((resolve, reject) => { settle = { resolve, reject } })

  const schedule = (files: string[]) => {
    for (const file of files) pending.add(file)
    clearTimeout(timer)
    timer = setTimeout(flush, debounceMs)
  }
  const links = watchLinkTargets(options.watchDirectory ?? watchWithFs, schedule)
  const watchers = new Set<{ close(): void }>()
  // Timers of directories that are gone, each looking for its directory to come back.
  const polls = new Set<NodeJS.Timeout>()
  const close = async () => {
    if (!closed) {
      closed = true
      clearTimeout(timer)
      for (const poll of polls) clearTimeout(poll)
      for (const watcher of watchers) watcher.close()
      links.close()
      settle.resolve()
    }
    await round?.catch(() => undefined)
  }
  const fail = (error: unknown) => {
    settle.reject(error)
    void close()
  }

  // A file that came and went between two rounds (an editor's temp copy) changed nothing.
  const flush = () => {
    const changes: ScenarioChange[] = []
    for (const file of pending) {
      const exists = existsSync(file)
      const change = exists ? (known.has(file) ? 'changed' : 'added') : known.has(file) ? 'removed' : undefined
      if (exists) known.add(file)
      else known.delete(file)
      if (change) changes.push({ file, change })
    }
    pending.clear()
    links.update(known)
    if (changes.length > 0) enqueue(changes)
  }
  const enqueue = (changes: ScenarioChange[]) => {
    queued ??= new Map()
    for (const change of changes) {
      // Added then removed before its round: nothing to tell; removed then back: changed.
      const before = queued.get(change.file)?.change
      if (before === 'added' && change.change === 'removed') queued.delete(change.file)
      else if (before === 'removed' && change.change === 'added') queued.set(change.file, { ...change, change: 'changed' })
      else queued.set(change.file, before === 'added' ? { ...change, change: 'added' } : change)
    }
    round ??= drain()
  }
  const drain = async () => {
    while (queued && !closed) {
      const changes = [...queued.values()]
      queued = undefined
      try {
        let loaded: T
        try {
          loaded = await options.load()
        } catch (error) {
          options.onLoadError(error, changes)
          continue
        }
        if (!closed) await options.run(loaded, changes)
      } catch (error) {
        return fail(error)
      }
    }
    // Cleared before onIdle, so a rerun asked for from there starts a round of its own.
    round = undefined
    if (!closed) options.onIdle?.()
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
    const knownNames = () => [...known].filter((file) => dirname(file) === target.dir).map((file) => basename(file))
    const touch = (names: string[]) => schedule(names.filter(counts).map((name) => join(target.dir, asGiven(name))))
    const start = () => {
      const inode = inodeOf(path)
      const watcher = (options.watchDirectory ?? watchWithFs)(path, (name) => {
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
      void close()
      throw error
    }
  }
  links.update(known)
  enqueue([])
  return { rerun: () => { if (!closed) enqueue([]) }, close, done }
}
