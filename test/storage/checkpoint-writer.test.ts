import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import { describe, expect, it } from 'vitest'
import { createCheckpointWriter } from '../../src/storage/checkpoint-writer.js'
import { recoverJournals } from '../../src/storage/journal-files.js'
import { encodeRecords } from '../../src/storage/journal-format.js'
import { journaledFsDriver } from '../../src/storage/journaled-fs-driver.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-checkpoint')

/**
 * The thread runs at nice 19: beside processes that take every core (a busy CI machine), 600
 * synced files took 14-36 s, past the default 20 s timeout (71 s on one core beside a CPU burner).
 */
const STARVED_THREAD_TIMEOUT_MS = 120_000

/** This process's threads (Linux), each with its nice value. */
function readThreadNices(): Map<string, number> {
  const nices = new Map<string, number>()
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      nices.set(tid, Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]))
    } catch {} // a thread that ended while listed
  }
  return nices
}

/**
 * Runs `work` while sampling this process's threads; resolves with the threads that came and went
 * during it, each with the highest nice it was seen at (threads that stay, the fs pool's, are left out).
 */
async function watchPassingThreads(work: () => Promise<unknown>): Promise<number[]> {
  const before = new Set(readThreadNices().keys())
  const seen = new Map<string, number>()
  const sample = setInterval(() => {
    for (const [tid, nice] of readThreadNices()) if (!before.has(tid)) seen.set(tid, Math.max(seen.get(tid) ?? -20, nice))
  }, 1)
  try {
    await work()
  } finally {
    clearInterval(sample)
  }
  const after = readThreadNices()
  return [...seen].filter(([tid]) => !after.has(tid)).map(([, nice]) => nice)
}

describe('checkpoint writer (its own thread)', () => {
  it('writes every entry, deletes removed files, then deletes the journals, across several batches', { timeout: STARVED_THREAD_TIMEOUT_MS }, async () => {
    const dir = await tempDir()
    await mkdir(join(dir, 'old'))
    await writeFile(join(dir, 'old', 'gone'), 'x')
    await writeFile(join(dir, 'journal-1.log'), 'records')
    // At normal priority: what is written is checked here, the priority below.
    const writer = createCheckpointWriter({ lowPriority: false })
    // 600 entries: more than one message to the thread.
    const entries: Array<[string, string | null]> = Array.from({ length: 600 }, (_, i) => [join(dir, 'docs', `d${i}`), `{"n":${i},"text":"é"}`])
    entries.push([join(dir, 'old', 'gone'), null], [join(dir, 'old', 'never-was'), null])
    await writer.write(entries, [join(dir, 'journal-1.log')])
    await writer.close()
    expect(await readdir(dir)).toEqual(expect.not.arrayContaining(['journal-1.log']))
    expect(await readdir(join(dir, 'old'))).toEqual([])
    const files = await readdir(join(dir, 'docs'))
    expect(files).toHaveLength(600)
    expect(files.some((name) => name.endsWith('.tmp'))).toBe(false)
    expect(await readFile(join(dir, 'docs', 'd599'), 'utf8')).toBe('{"n":599,"text":"é"}')
  })

  it('rejects when a write fails and leaves the journals in place; the next write works', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'journal-1.log'), 'records')
    await writeFile(join(dir, 'blocker'), 'a file where a directory is needed')
    const writer = createCheckpointWriter()
    await expect(writer.write([[join(dir, 'blocker', 'doc'), '{}']], [join(dir, 'journal-1.log')])).rejects.toThrow(/checkpoint failed/)
    expect(await readdir(dir)).toContain('journal-1.log')
    await writer.write([[join(dir, 'ok', 'doc'), '{}']], [join(dir, 'journal-1.log')])
    await writer.close()
    expect(await readdir(dir)).not.toContain('journal-1.log')
    expect(await readFile(join(dir, 'ok', 'doc'), 'utf8')).toBe('{}')
  })

  it.runIf(process.platform === 'linux')('runs at the lowest CPU priority, so a checkpoint does not take the event loop\'s CPU', async () => {
    // Counted, not merely looked for: a writer an earlier test left running (timed out) is at 19 already.
    const lowest = () => [...readThreadNices().values()].filter((nice) => nice === 19).length
    const before = lowest()
    const writer = createCheckpointWriter()
    await writer.write([[join(await tempDir(), 'doc'), '{}']], [])
    expect(lowest()).toBe(before + 1)
    await writer.close()
  })

  it.runIf(process.platform === 'linux')('replays a gone server\'s journals at normal priority: the server waits for that replay before it listens', { timeout: STARVED_THREAD_TIMEOUT_MS }, async () => {
    // At nice 19 on one core shared with other work, a restart after kill -9 with 600 keys'
    // deliveries waiting took 52-77 s to listen, against 5 s: nothing else in the process runs then.
    const dir = await tempDir()
    const records = Array.from({ length: 600 }, (_, i) => ({ key: `session:k${i}:default`, value: `{"n":${i}}` }))
    await writeFile(join(dir, 'journal-4242-000001.log'), encodeRecords(records, true))
    const replayThreads = await watchPassingThreads(async () => expect(await recoverJournals(dir)).toBe(600))
    expect(await readFile(join(dir, 'session', 'k599~default'), 'utf8')).toBe('{"n":599}')
    // The replay's own thread is the one that came and went with it.
    expect(replayThreads.length).toBeGreaterThan(0)
    expect(replayThreads).not.toContain(19)
  })

  it.runIf(process.platform === 'linux')('moves to a thread at normal priority when asked, which writes every entry before it deletes the journals', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'journal-1.log'), 'records')
    const lowest = () => [...readThreadNices().values()].filter((nice) => nice === 19).length
    const writer = createCheckpointWriter()
    await writer.write([[join(dir, 'first'), '{}']], [])
    const atNice19 = lowest()
    writer.raisePriority()
    const entries: Array<[string, string | null]> = Array.from({ length: 600 }, (_, i) => [join(dir, 'docs', `d${i}`), `{"n":${i}}`])
    await writer.write(entries, [join(dir, 'journal-1.log')])
    expect(lowest()).toBe(atNice19 - 1)
    expect(await readdir(join(dir, 'docs'))).toHaveLength(600)
    expect(await readdir(dir)).not.toContain('journal-1.log')
    await writer.close()
  })

  it.runIf(process.platform === 'linux')('writes the last checkpoints of a stop (dispose) at normal priority: the stop waits for them', { timeout: STARVED_THREAD_TIMEOUT_MS }, async () => {
    // At nice 19 on one core shared with other work, a serve stop with 600 keys' documents
    // pending took over 70 s.
    const dir = await tempDir()
    const storage = createStorage({ driver: journaledFsDriver({ base: dir, checkpointDelayMs: 60_000 }) })
    for (let i = 0; i < 300; i++) await storage.setItem(`session:k${i}:default`, { n: i })
    const stopThreads = await watchPassingThreads(() => storage.dispose())
    expect(await readFile(join(dir, 'session', 'k299~default'), 'utf8')).toBe('{"n":299}')
    expect((await readdir(dir)).filter((name) => name.startsWith('journal-'))).toEqual([])
    expect(stopThreads.length).toBeGreaterThan(0)
    expect(stopThreads).not.toContain(19)
  })
})
