import { existsSync } from 'node:fs'
import { watchLinkTargets } from './watch-link-targets.js'
import { watchScenarioDirs, watchWithFs, type WatchDirectory } from './watch-scenario-dirs.js'
import { isCancelledBy, RoundCancelledError } from './round-cancelled.js'

export type { WatchDirectory } from './watch-scenario-dirs.js'

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
  /**
   * Runs what `load` gave. `changes` is empty for the first round and a rerun asked for. `signal`
   * aborts, with a RoundCancelledError, when a change or a rerun comes during the round, or the
   * watch closes: a run that heeds it ends early (rejecting with `signal.reason`, or with an
   * AbortError caused by it as Node's own APIs do, is fine) and the next round starts; one that
   * ignores it is waited for, as before.
   */
  run(loaded: T, changes: ScenarioChange[], signal: AbortSignal): Promise<void>
  /** Tells why `load` failed (a throw from here ends the watch, as one from `run` does). */
  onLoadError(error: unknown, changes: ScenarioChange[]): void
  /** After each round, when nothing more is waiting to run. */
  onIdle?(): void
  /** How long the files must stay quiet before a round starts (default WATCH_DEBOUNCE_MS). */
  debounceMs?: number
  /** How long changes wait at most for the files to go quiet (default WATCH_MAX_WAIT_MS). */
  maxWaitMs?: number
  /** How a directory is watched: fs.watch by default (tests pass a fake). */
  watchDirectory?: WatchDirectory
  /** The system whose file names are compared (default process.platform: without case on macOS and Windows). */
  platform?: NodeJS.Platform
}

/** A running watch. */
export interface ScenarioWatch {
  /** Runs again as a change would: now, or once the round in progress has been cancelled. */
  rerun(): void
  /** Stops watching and cancels the round in progress; resolves once it has ended. */
  close(): Promise<void>
  /** Resolves when closed; rejects with what `run` or `onLoadError` threw, which closes the watch. */
  readonly done: Promise<void>
}

/**
 * Editors save in steps (truncate then write, or a temp file renamed over the scenario): events
 * closer together than this are one change, so a save runs once and never on a half-written file.
 */
export const WATCH_DEBOUNCE_MS = 150

/**
 * Files that never go quiet (a script rewriting them in a loop, an editor autosaving every 100 ms)
 * would push every round back for as long as they are written: a change waits at most this long.
 */
export const WATCH_MAX_WAIT_MS = 1000

/**
 * Runs `load` then `run` once, then again after each change to the watched scenario files, one
 * round at a time: a change during a round aborts the round's signal and queues exactly one more,
 * whatever more changes come before it starts. A directory is watched
 * itself (fs.watch, not recursive), and so is each file's directory, so a save through a rename
 * is seen where a watch on the file would lose it; a watched directory deleted is watched again
 * when it is back.
 */
export function watchScenarios<T>(options: WatchScenariosOptions<T>): ScenarioWatch {
  const debounceMs = options.debounceMs ?? WATCH_DEBOUNCE_MS
  const maxWaitMs = options.maxWaitMs ?? WATCH_MAX_WAIT_MS
  const known = new Set<string>()
  const pending = new Set<string>()
  let queued: Map<string, ScenarioChange> | undefined
  let timer: NodeJS.Timeout | undefined
  // Set by the first change since the last flush; not pushed back by later ones.
  let deadline: NodeJS.Timeout | undefined
  let round: Promise<void> | undefined
  // The round in progress's, from its load to the end of its run.
  let cancel: AbortController | undefined
  let closed = false
  let settle!: { resolve(): void; reject(error: unknown): void }
  const done = new Promise<void>((resolve, reject) => { settle = { resolve, reject } })

  const schedule = (files: string[]) => {
    for (const file of files) pending.add(file)
    clearTimeout(timer)
    timer = setTimeout(flush, debounceMs)
    deadline ??= setTimeout(flush, maxWaitMs)
  }
  const watchDirectory = options.watchDirectory ?? watchWithFs
  const links = watchLinkTargets(watchDirectory, schedule)
  let dirs: { close(): void } | undefined
  const close = async () => {
    if (!closed) {
      closed = true
      clearTimeout(timer)
      clearTimeout(deadline)
      dirs?.close()
      links.close()
      cancel?.abort(new RoundCancelledError([], true))
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
    clearTimeout(timer)
    clearTimeout(deadline)
    deadline = undefined
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
    // The first change since the round began says why it stops; later ones join the next round.
    if (cancel && !cancel.signal.aborted) cancel.abort(new RoundCancelledError(changes))
    round ??= drain()
  }
  const requeueBefore = (changes: ScenarioChange[]) => {
    const later = queued
    queued = undefined
    enqueue(changes)
    if (later) enqueue([...later.values()])
  }
  const drain = async () => {
    while (queued && !closed) {
      const changes = [...queued.values()]
      queued = undefined
      cancel = new AbortController()
      const { signal } = cancel
      try {
        let loaded: T
        try {
          loaded = await options.load()
        } catch (error) {
          options.onLoadError(error, changes)
          continue
        }
        // Changed again while loading: what was read is stale. These changes go first in the next round's.
        if (signal.aborted) {
          requeueBefore(changes)
          continue
        }
        if (!closed) await options.run(loaded, changes, signal)
      } catch (error) {
        // The run ended on the abort it was given: cancelled, not broken.
        if (isCancelledBy(error, signal)) continue
        return fail(error)
      } finally {
        cancel = undefined
      }
    }
    // Cleared before onIdle, so a rerun asked for from there starts a round of its own.
    round = undefined
    if (!closed) options.onIdle?.()
  }

  try {
    dirs = watchScenarioDirs({ files: options.files ?? [], dirs: options.dirs ?? [], watchDirectory, platform: options.platform ?? process.platform, known, onFiles: schedule })
  } catch (error) {
    void close()
    throw error
  }
  links.update(known)
  enqueue([])
  return { rerun: () => { if (!closed) enqueue([]) }, close, done }
}
