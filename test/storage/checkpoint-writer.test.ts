import { readdirSync, readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createCheckpointWriter } from '../../src/storage/checkpoint-writer.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-checkpoint')

/**
 * The thread runs at nice 19: beside processes that take every core (a busy CI machine), 600
 * synced files took 14-36 s, past the default 20 s timeout.
 */
const STARVED_THREAD_TIMEOUT_MS = 120_000

describe('checkpoint writer (its own thread)', () => {
  it('writes every entry, deletes removed files, then deletes the journals, across several batches', { timeout: STARVED_THREAD_TIMEOUT_MS }, async () => {
    const dir = await tempDir()
    await mkdir(join(dir, 'old'))
    await writeFile(join(dir, 'old', 'gone'), 'x')
    await writeFile(join(dir, 'journal-1.log'), 'records')
    const writer = createCheckpointWriter()
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
    const nices = () => readdirSync('/proc/self/task').map((tid) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]))
    // Counted, not merely looked for: a writer an earlier test left running (timed out) is at 19 already.
    const lowest = () => nices().filter((nice) => nice === 19).length
    const before = lowest()
    const writer = createCheckpointWriter()
    await writer.write([[join(await tempDir(), 'doc'), '{}']], [])
    expect(lowest()).toBe(before + 1)
    await writer.close()
  })
})
