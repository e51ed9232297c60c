import { mkdir, readFile, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { setTimeout as waitFor } from 'node:timers/promises'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { listenForWatchKeys } from '../../src/cli/watch-keys.js'
import { RoundCancelledError } from '../../src/scenarios/round-cancelled.js'
import { watchScenarios, WATCH_DEBOUNCE_MS, WATCH_MAX_WAIT_MS, type ScenarioChange, type ScenarioWatch, type WatchDirectory } from '../../src/scenarios/watch-scenarios.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-watch')

/** A watcher whose events the test sends, per directory. */
function fakeWatcher() {
  const listeners = new Map<string, (name: string | null) => void>()
  const watchDirectory: WatchDirectory = (dir, onEvent) => {
    listeners.set(dir, onEvent)
    return { close: () => listeners.delete(dir) }
  }
  return { watchDirectory, emit: (dir: string, name: string | null) => listeners.get(dir)?.(name), watching: () => listeners.size }
}

/** Rounds as the watch ran them, and a promise for the next idle moment. */
function recordRounds() {
  const rounds: Array<{ changes: ScenarioChange[]; loaded?: unknown; error?: string }> = []
  let idle: () => void = () => {}
  let nextIdle = new Promise<void>((resolve) => { idle = resolve })
  return {
    rounds,
    onIdle: () => {
      const resolve = idle
      nextIdle = new Promise<void>((next) => { idle = next })
      resolve()
    },
    idle: () => nextIdle,
  }
}

const open: ScenarioWatch[] = []
afterEach(async () => {
  vi.useRealTimers()
  await Promise.all(open.splice(0).map((watch) => watch.close()))
})

/** Lets the events' timers fire and the round they start settle (fake timers). */
async function settle(ms = WATCH_DEBOUNCE_MS): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms)
}

/** A watch (fake timers, fake watcher) of a directory holding a.json, after its first round. */
/** A watch of a directory holding a.json, past its first run; `given` is the directory as the user typed it. */
async function watchDirOfOneFile(given: (dir: string) => string = (dir) => dir) {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
  const dir = await tempDir()
  await writeFile(join(dir, 'a.json'), '{}')
  const fake = fakeWatcher()
  const record = recordRounds()
  const idle = record.idle()
  open.push(watchScenarios({ dirs: [given(dir)], watchDirectory: fake.watchDirectory, load: async () => 'loaded', run: async (loaded, changes) => { record.rounds.push({ loaded, changes }) }, onLoadError: () => {}, onIdle: record.onIdle }))
  await idle
  return { dir, fake, record }
}

describe('watchScenarios', () => {
  it('runs once at start, then once per burst of saves, after the files are quiet', async () => {
    const { dir, fake, record } = await watchDirOfOneFile()
    expect(record.rounds).toEqual([{ loaded: 'loaded', changes: [] }])
    // An editor's save: truncate, write, write again, each an event, the last 100 ms after the first.
    fake.emit(dir, 'a.json')
    await settle(50)
    fake.emit(dir, 'a.json')
    await settle(50)
    fake.emit(dir, 'a.json')
    await settle(WATCH_DEBOUNCE_MS - 1)
    expect(record.rounds).toHaveLength(1)
    const next = record.idle()
    await settle(1)
    await next
    expect(record.rounds).toEqual([{ loaded: 'loaded', changes: [] }, { loaded: 'loaded', changes: [{ file: join(dir, 'a.json'), change: 'changed' }] }])
  })

  it('on a platform whose events name no file, tells a file that is gone as removed', async () => {
    const { dir, fake, record } = await watchDirOfOneFile()
    await rm(join(dir, 'a.json'))
    const next = record.idle()
    fake.emit(dir, null)
    await settle()
    await next
    expect(record.rounds.at(-1)!.changes).toEqual([{ file: join(dir, 'a.json'), change: 'removed' }])
  })

  it('tells a file that is gone as removed when the directory was given with a trailing slash (--dir sc/, as TAB completes it)', async () => {
    const { dir, fake, record } = await watchDirOfOneFile((dir) => `${dir}/`)
    await rm(join(dir, 'a.json'))
    let idle = record.idle()
    fake.emit(dir, null)
    await settle()
    await idle
    expect(record.rounds.at(-1)!.changes).toEqual([{ file: join(dir, 'a.json'), change: 'removed' }])
    // Back: added, not changed, as it was known to be gone.
    await writeFile(join(dir, 'a.json'), '{}')
    idle = record.idle()
    fake.emit(dir, 'a.json')
    await settle()
    await idle
    expect(record.rounds.at(-1)!.changes).toEqual([{ file: join(dir, 'a.json'), change: 'added' }])
  })

  it('runs a file that is written without a pause (every 100 ms) within WATCH_MAX_WAIT_MS, not only once it stops', async () => {
    const { dir, fake, record } = await watchDirOfOneFile()
    // Each write comes before the debounce ends, for twice the longest wait.
    for (let at = 0; at < 2 * WATCH_MAX_WAIT_MS; at += 100) {
      fake.emit(dir, 'a.json')
      await settle(100)
      if (at + 100 === WATCH_MAX_WAIT_MS) expect(record.rounds).toHaveLength(2)
    }
    expect(record.rounds.length).toBeGreaterThanOrEqual(3)
    expect(record.rounds[1]).toEqual({ loaded: 'loaded', changes: [{ file: join(dir, 'a.json'), change: 'changed' }] })
  })

  it('tells added and removed files, and leaves out editor temp and hidden files and files that came and went', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const dir = await tempDir()
    await writeFile(join(dir, 'a.json'), '{}')
    const fake = fakeWatcher()
    const record = recordRounds()
    let idle = record.idle()
    open.push(watchScenarios({ dirs: [dir], watchDirectory: fake.watchDirectory, load: async () => null, run: async (_loaded, changes) => { record.rounds.push({ changes }) }, onLoadError: () => {}, onIdle: record.onIdle }))
    await idle
    await writeFile(join(dir, 'b.json'), '{}')
    // A YAML scenario is told too: the load refuses it, saying why.
    await writeFile(join(dir, 'c.yaml'), '')
    await writeFile(join(dir, '.a.json.swp'), '')
    await writeFile(join(dir, 'a.json~'), '')
    await writeFile(join(dir, 'gone.json'), '{}')
    await rm(join(dir, 'gone.json'))
    await rm(join(dir, 'a.json'))
    for (const name of ['b.json', 'c.yaml', '.a.json.swp', 'a.json~', 'gone.json', 'a.json']) fake.emit(dir, name)
    idle = record.idle()
    await settle()
    await idle
    expect(record.rounds.at(-1)!.changes).toEqual([{ file: join(dir, 'b.json'), change: 'added' }, { file: join(dir, 'c.yaml'), change: 'added' }, { file: join(dir, 'a.json'), change: 'removed' }])
    // Only temp files: no round at all.
    const rounds = record.rounds.length
    fake.emit(dir, '4913')
    fake.emit(dir, '.b.json.swp')
    // Emacs's lock while a buffer is unsaved, macOS's AppleDouble file: hidden, as the load leaves them out.
    await symlink('partner@laptop.4242:1700000000', join(dir, '.#b.json'))
    await writeFile(join(dir, '._b.json'), '')
    fake.emit(dir, '.#b.json')
    fake.emit(dir, '._b.json')
    await settle()
    expect(record.rounds).toHaveLength(rounds)
  })

  it('runs again when a scenario that is a link to a file elsewhere is saved there', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const [dir, shared] = [await tempDir(), await tempDir()]
    await writeFile(join(shared, 'loan.json'), '{}')
    await symlink(join(shared, 'loan.json'), join(dir, 'loan.json'))
    const fake = fakeWatcher()
    const record = recordRounds()
    let idle = record.idle()
    open.push(watchScenarios({ dirs: [dir], watchDirectory: fake.watchDirectory, load: async () => null, run: async (_loaded, changes) => { record.rounds.push({ changes }) }, onLoadError: () => {}, onIdle: record.onIdle }))
    await idle
    // Saved where the file is: the event comes from the other directory, under the target's name.
    idle = record.idle()
    fake.emit(await realpath(shared), 'loan.json')
    await settle()
    await idle
    expect(record.rounds.at(-1)!.changes).toEqual([{ file: join(dir, 'loan.json'), change: 'changed' }])
    // A second link to the same file, added while watching: a save there is told for both links.
    await symlink(join(shared, 'loan.json'), join(dir, 'loan-copy.json'))
    idle = record.idle()
    fake.emit(dir, 'loan-copy.json')
    await settle()
    await idle
    idle = record.idle()
    fake.emit(await realpath(shared), 'loan.json')
    await settle()
    await idle
    expect(record.rounds.at(-1)!.changes.map(({ file, change }) => `${change} ${file}`).sort()).toEqual([`changed ${join(dir, 'loan-copy.json')}`, `changed ${join(dir, 'loan.json')}`])
    // An event without a name (some platforms): every link into that directory may have changed.
    idle = record.idle()
    fake.emit(await realpath(shared), null)
    await settle()
    await idle
    expect(record.rounds.at(-1)!.changes.map(({ file, change }) => `${change} ${file}`).sort()).toEqual([`changed ${join(dir, 'loan-copy.json')}`, `changed ${join(dir, 'loan.json')}`])
    // Both links gone: the directory they led into is no longer watched.
    expect(fake.watching()).toBe(2)
    await rm(join(dir, 'loan.json'))
    await rm(join(dir, 'loan-copy.json'))
    idle = record.idle()
    fake.emit(dir, 'loan.json')
    fake.emit(dir, 'loan-copy.json')
    await settle()
    await idle
    expect(fake.watching()).toBe(1)
  })

  it('on macOS and Windows sees saves to a file named in another case than the disk\'s (Loan.json for loan.json)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const dir = await tempDir()
    // Named as the user typed it; there the file system finds loan.json under that name, and its
    // events name the file as stored. (Here, case-sensitive, the file is made under the name given.)
    await writeFile(join(dir, 'Loan.json'), '{}')
    for (const platform of ['darwin', 'win32', 'linux'] as const) {
      const fake = fakeWatcher()
      const record = recordRounds()
      const watch = watchScenarios({ files: [join(dir, 'Loan.json')], platform, watchDirectory: fake.watchDirectory, load: async () => null, run: async (_loaded, changes) => { record.rounds.push({ changes }) }, onLoadError: () => {}, onIdle: record.onIdle })
      open.push(watch)
      await record.idle()
      fake.emit(dir, 'loan.json')
      await settle()
      // Linux: another file, as loan.json is not Loan.json on a case-sensitive file system.
      const seen = platform === 'linux' ? [] : [{ changes: [{ file: join(dir, 'Loan.json'), change: 'changed' }] }]
      expect(record.rounds.slice(1), platform).toEqual(seen)
      await watch.close()
    }
  })

  it('never runs two rounds at once: changes during a round make exactly one more, with all of them', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const dir = await tempDir()
    for (const name of ['a.json', 'b.json']) await writeFile(join(dir, name), '{}')
    const fake = fakeWatcher()
    const record = recordRounds()
    let running = 0
    let release!: () => void
    const firstRoundHeld = new Promise<void>((resolve) => { release = resolve })
    const watch = watchScenarios({
      dirs: [dir],
      watchDirectory: fake.watchDirectory,
      load: async () => null,
      run: async (_loaded, changes) => {
        running++
        expect(running).toBe(1)
        record.rounds.push({ changes })
        if (record.rounds.length === 1) await firstRoundHeld
        running--
      },
      onLoadError: () => {},
      onIdle: record.onIdle,
    })
    open.push(watch)
    // Two saves, each settled past the debounce, and a rerun asked for, all while round 1 runs.
    fake.emit(dir, 'a.json')
    await settle()
    fake.emit(dir, 'b.json')
    await settle()
    watch.rerun()
    expect(record.rounds).toHaveLength(1)
    const idle = record.idle()
    release()
    // A second round at once would throw in run and end the watch: done rejects.
    await Promise.race([idle, watch.done])
    expect(record.rounds.map((round) => round.changes)).toEqual([[], [{ file: join(dir, 'a.json'), change: 'changed' }, { file: join(dir, 'b.json'), change: 'changed' }]])
  })

  it('cancels the round in progress on a change: its signal aborts saying why, and one round follows with every change since', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const dir = await tempDir()
    for (const name of ['a.json', 'b.json']) await writeFile(join(dir, name), '{}')
    const fake = fakeWatcher()
    const record = recordRounds()
    const reasons: unknown[] = []
    let running = 0
    let release!: () => void
    const cancelHeld = new Promise<void>((resolve) => { release = resolve })
    const watch = watchScenarios({
      dirs: [dir],
      watchDirectory: fake.watchDirectory,
      load: async () => null,
      run: async (_loaded, changes, signal) => {
        running++
        expect(running).toBe(1)
        record.rounds.push({ changes })
        try {
          if (record.rounds.length > 1) return
          // As a run in a long wait: it ends on the abort, after a moment of its own (closing its server).
          await new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => {
            reasons.push(signal.reason)
            void cancelHeld.then(() => reject(signal.reason))
          }))
        } finally {
          running--
        }
      },
      onLoadError: () => {},
      onIdle: record.onIdle,
    })
    open.push(watch)
    fake.emit(dir, 'a.json')
    await settle()
    expect(reasons).toEqual([expect.any(RoundCancelledError)])
    expect(reasons[0]).toMatchObject({ name: 'AbortError', changes: [{ file: join(dir, 'a.json'), change: 'changed' }], closing: false })
    // More saves and a rerun while the cancelled round is still ending: one round, with all of them.
    fake.emit(dir, 'b.json')
    await settle()
    watch.rerun()
    expect(record.rounds).toHaveLength(1)
    const idle = record.idle()
    release()
    await Promise.race([idle, watch.done])
    expect(record.rounds.map((round) => round.changes)).toEqual([[], [{ file: join(dir, 'a.json'), change: 'changed' }, { file: join(dir, 'b.json'), change: 'changed' }]])
    expect(reasons).toHaveLength(1)
    // The run's rejection with the abort's reason is no error of the watch: it goes on.
    fake.emit(dir, 'a.json')
    const next = record.idle()
    await settle()
    await Promise.race([next, watch.done])
    expect(record.rounds).toHaveLength(3)
  })

  it('cancels the round in progress on a rerun and on close, which resolves once that round has ended', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const dir = await tempDir()
    const fake = fakeWatcher()
    const reasons: RoundCancelledError[] = []
    let started = 0
    let ended = 0
    const watch = watchScenarios({
      dirs: [dir],
      watchDirectory: fake.watchDirectory,
      load: async () => null,
      run: async (_loaded, _changes, signal) => {
        started++
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()))
        reasons.push(signal.reason as RoundCancelledError)
        ended++
      },
      onLoadError: () => {},
    })
    await vi.waitFor(() => expect(started).toBe(1))
    watch.rerun()
    await vi.waitFor(() => expect(started).toBe(2))
    expect(ended).toBe(1)
    expect(reasons[0]).toMatchObject({ changes: [], closing: false })
    await watch.close()
    expect(ended).toBe(2)
    expect(reasons[1]).toMatchObject({ changes: [], closing: true })
    await expect(watch.done).resolves.toBeUndefined()
  })

  it('takes a run that ends with Node\'s AbortError for its signal (timers/promises, events.once) as cancelled, not as an error ending the watch', async () => {
    const dir = await tempDir()
    const rounds: Array<{ changes: ScenarioChange[]; ended?: string }> = []
    const watch = watchScenarios({
      dirs: [dir],
      watchDirectory: fakeWatcher().watchDirectory,
      load: async () => null,
      run: async (_loaded, changes, signal) => {
        const round = { changes }
        rounds.push(round)
        if (rounds.length > 1) return
        // Node's own waits reject with an AbortError of their own, the signal's reason as its cause.
        await waitFor(60_000, undefined, { signal }).catch((error: Error) => {
          Object.assign(round, { ended: `${error.name}, cause ${(error.cause as Error).name}` })
          throw error
        })
      },
      onLoadError: () => {},
    })
    open.push(watch)
    await vi.waitFor(() => expect(rounds).toHaveLength(1))
    watch.rerun()
    const outcome = await Promise.race([watch.done.then(() => 'closed', (error: Error) => `ended by ${error.name}`), vi.waitFor(() => expect(rounds).toHaveLength(2)).then(() => 'next round')])
    expect(outcome).toBe('next round')
    expect(rounds).toEqual([{ changes: [], ended: 'AbortError, cause AbortError' }, { changes: [] }])
  })

  it('tells a file that does not load and goes on watching: the next good save runs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const dir = await tempDir()
    const file = join(dir, 'a.json')
    await writeFile(file, '{"ok": 1}')
    const fake = fakeWatcher()
    const record = recordRounds()
    const errors: Array<{ message: string; changes: ScenarioChange[] }> = []
    let idle = record.idle()
    const watch = watchScenarios({
      files: [file],
      watchDirectory: fake.watchDirectory,
      load: async () => JSON.parse(await readFile(file, 'utf8')) as unknown,
      run: async (loaded, changes) => { record.rounds.push({ loaded, changes }) },
      onLoadError: (error, changes) => { errors.push({ message: (error as Error).message, changes }) },
      onIdle: record.onIdle,
    })
    open.push(watch)
    await idle
    await writeFile(file, '{"ok": ')
    fake.emit(dir, 'a.json')
    idle = record.idle()
    await settle()
    await Promise.race([idle, watch.done])
    expect(errors).toEqual([{ message: expect.stringContaining('JSON'), changes: [{ file, change: 'changed' }] }])
    await writeFile(file, '{"ok": 2}')
    fake.emit(dir, 'a.json')
    idle = record.idle()
    await settle()
    await idle
    expect(record.rounds.map((round) => round.loaded)).toEqual([{ ok: 1 }, { ok: 2 }])
    // A file beside the named one is not watched.
    fake.emit(dir, 'b.json')
    await settle()
    expect(record.rounds).toHaveLength(2)
  })

  it('ends on close (no round after it), and with the error when a round throws one', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const dir = await tempDir()
    const fake = fakeWatcher()
    const record = recordRounds()
    const idle = record.idle()
    const watch = watchScenarios({ dirs: [dir], watchDirectory: fake.watchDirectory, load: async () => null, run: async (_loaded, changes) => { record.rounds.push({ changes }) }, onLoadError: () => {}, onIdle: record.onIdle })
    await idle
    await watch.close()
    await expect(watch.done).resolves.toBeUndefined()
    expect(fake.watching()).toBe(0)
    watch.rerun()
    await settle()
    expect(record.rounds).toHaveLength(1)

    const failing = watchScenarios({ dirs: [dir], watchDirectory: fake.watchDirectory, load: async () => null, run: async () => { throw new Error('a bug') }, onLoadError: () => {} })
    await expect(failing.done).rejects.toThrow('a bug')
    expect(fake.watching()).toBe(0)
  })

  it('ends with an AbortError a round throws that its signal did not cause, whether the round was cancelled or not', async () => {
    const dir = await tempDir()
    // Not cancelled: an abort of the run's own, not of the round.
    const notCancelled = watchScenarios({ dirs: [dir], watchDirectory: fakeWatcher().watchDirectory, load: async () => null, run: async () => { throw new DOMException('a wait of its own was aborted', 'AbortError') }, onLoadError: () => {} })
    open.push(notCancelled)
    await expect(notCancelled.done).rejects.toThrow('a wait of its own was aborted')

    // Cancelled by a rerun, but ending with an AbortError of its own, not caused by the round's.
    let started = 0
    const cancelled = watchScenarios({
      dirs: [dir],
      watchDirectory: fakeWatcher().watchDirectory,
      load: async () => null,
      run: (_loaded, _changes, signal) => new Promise((_resolve, reject) => {
        started++
        signal.addEventListener('abort', () => reject(new DOMException('a wait of its own was aborted too', 'AbortError')))
      }),
      onLoadError: () => {},
    })
    open.push(cancelled)
    await vi.waitFor(() => expect(started).toBe(1))
    cancelled.rerun()
    await expect(cancelled.done).rejects.toThrow('a wait of its own was aborted too')
    expect(started).toBe(1)
  })

  it('a change while the scenarios load: the round does not run what it read, and the next one has the changes in the order made', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const dir = await tempDir()
    for (const name of ['a.json', 'b.json']) await writeFile(join(dir, name), '{}')
    const fake = fakeWatcher()
    const record = recordRounds()
    const first = record.idle()
    let loads = 0
    let loading!: () => void
    const secondLoad = new Promise<void>((resolve) => { loading = resolve })
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    const watch = watchScenarios({
      dirs: [dir],
      watchDirectory: fake.watchDirectory,
      load: async () => {
        loads++
        if (loads === 2) {
          loading()
          await held
        }
        return `load ${loads}`
      },
      run: async (loaded, changes) => { record.rounds.push({ loaded, changes }) },
      onLoadError: () => {},
      onIdle: record.onIdle,
    })
    open.push(watch)
    await first
    fake.emit(dir, 'a.json')
    await settle()
    await secondLoad
    // Saved while a.json's round reads the files.
    fake.emit(dir, 'b.json')
    await settle()
    const idle = record.idle()
    release()
    await Promise.race([idle, watch.done])
    expect(record.rounds).toEqual([
      { loaded: 'load 1', changes: [] },
      { loaded: 'load 3', changes: [{ file: join(dir, 'a.json'), change: 'changed' }, { file: join(dir, 'b.json'), change: 'changed' }] },
    ])
  })

  it('sees a save through a rename with the real fs.watch', async () => {
    const dir = await tempDir()
    const file = join(dir, 'a.json')
    await writeFile(file, '1')
    const record = recordRounds()
    let idle = record.idle()
    open.push(watchScenarios({ files: [file], load: async () => readFile(file, 'utf8'), run: async (loaded, changes) => { record.rounds.push({ loaded, changes }) }, onLoadError: () => {}, onIdle: record.onIdle }))
    await idle
    // As editors save atomically: a temp file beside it, renamed over it (a watch on the file itself would lose it).
    for (const content of ['2', '3']) {
      idle = record.idle()
      await writeFile(`${file}.tmp`, content)
      await rename(`${file}.tmp`, file)
      await idle
    }
    expect(record.rounds.map((round) => round.loaded)).toEqual(['1', '2', '3'])
    expect(record.rounds[2]!.changes).toEqual([{ file, change: 'changed' }])
  })

  it('goes on watching a directory that is deleted and made again (rm -rf, then a copy back)', async () => {
    const dir = join(await tempDir(), 'scenarios')
    await mkdir(dir)
    const file = join(dir, 'a.json')
    await writeFile(file, '1')
    const record = recordRounds()
    let idle = record.idle()
    const load = async () => readFile(file, 'utf8')
    open.push(watchScenarios({ dirs: [dir], load, run: async (loaded, changes) => { record.rounds.push({ loaded, changes }) }, onLoadError: (_error, changes) => { record.rounds.push({ changes, error: 'load' }) }, onIdle: record.onIdle }))
    await idle
    idle = record.idle()
    await rm(dir, { recursive: true })
    await idle
    expect(record.rounds.at(-1)).toEqual({ changes: [{ file, change: 'removed' }], error: 'load' })
    idle = record.idle()
    await mkdir(dir)
    await writeFile(file, '2')
    await idle
    expect(record.rounds.at(-1)).toEqual({ loaded: '2', changes: [{ file, change: 'added' }] })
    // And its watch is a live one: the next save runs too.
    idle = record.idle()
    await writeFile(file, '3')
    await idle
    expect(record.rounds.at(-1)).toEqual({ loaded: '3', changes: [{ file, change: 'changed' }] })
  })
})

describe('the watch keys on a terminal', () => {
  it('runs again on Enter or r, quits on q, and ignores other lines', async () => {
    const input = new PassThrough()
    const actions = { rerun: vi.fn(), quit: vi.fn() }
    const stop = listenForWatchKeys(input, actions)
    input.write('\n')
    input.write('r\n')
    input.write('x\n')
    input.write(' Q \n')
    await new Promise((resolve) => setImmediate(resolve))
    expect(actions.rerun).toHaveBeenCalledTimes(2)
    expect(actions.quit).toHaveBeenCalledTimes(1)
    stop()
    input.write('q\n')
    await new Promise((resolve) => setImmediate(resolve))
    expect(actions.quit).toHaveBeenCalledTimes(1)
  })
})
