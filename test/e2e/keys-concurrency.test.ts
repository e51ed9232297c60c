import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, unlink, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'
import { createKeyRecord } from '../../src/keys/keys-file.js'
import { writeKeysFile } from '../../src/keys/write-keys-file.js'

afterEach(() => killAll())

const tempDir = useTempDirs('sandbox-keys-concurrency')

// Enough at once that, without the lock, some always read the file before another wrote it:
// 12 creates lost 4 to 8 keys in each of 6 trials, where 8 lost none in one trial of 7; 4 revokes
// beside 4 creates undid a revoke or lost a key in each of 13 (3, two revokes and a create, kept
// every change in one trial of five).
const CREATES = 12
const REVOKES = 4

interface StoredKey {
  key: string
  revoked_at: string | null
}

async function readStoredKeys(file: string): Promise<StoredKey[]> {
  return JSON.parse(await readFile(file, 'utf8')).keys
}

/** The pid of a node process that has ended: a lock naming it was left by a process that is gone. */
function findDeadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', ''])
    child.on('error', reject)
    child.on('close', () => resolve(child.pid!))
  })
}

describe('sandbox keys run at the same time', () => {
  it('keeps every key that parallel creates printed', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const keysFile = join(await tempDir(), 'keys.json')
    const runs = await Promise.all(Array.from({ length: CREATES }, () => runCli(['keys', 'create', '--keys', keysFile])))
    for (const run of runs) expect(run.code, run.stderr).toBe(0)
    const printed = runs.map((run) => run.stdout.trim())
    const stored = (await readStoredKeys(keysFile)).map((record) => record.key)
    expect(stored.sort()).toEqual([...printed].sort())
    expect(existsSync(`${keysFile}.lock`)).toBe(false)
  })

  it('keeps every revoke that ran alongside other revokes and creates', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const keysFile = join(await tempDir(), 'keys.json')
    const records = Array.from({ length: REVOKES }, () => createKeyRecord({ now: new Date() }))
    await writeKeysFile(keysFile, { version: 1, keys: records })
    const revoked = records.map((record) => record.key)
    const runs = await Promise.all([
      ...revoked.map((key) => runCli(['keys', 'revoke', key, '--keys', keysFile])),
      ...Array.from({ length: REVOKES }, () => runCli(['keys', 'create', '--keys', keysFile])),
    ])
    for (const run of runs) expect(run.code, run.stderr).toBe(0)
    for (const run of runs.slice(0, REVOKES)) expect(run.stdout).toContain(' revoked;')
    const stored = await readStoredKeys(keysFile)
    // Revoked keys are never lost, only un-revoked: checked first, so that is what a failure shows.
    for (const key of revoked) expect(stored.find((record) => record.key === key)?.revoked_at, key).toEqual(expect.any(String))
    const created = runs.slice(REVOKES).map((run) => run.stdout.trim())
    expect(stored.map((record) => record.key).sort()).toEqual([...revoked, ...created].sort())
    for (const key of created) expect(stored.find((record) => record.key === key)?.revoked_at, key).toBeNull()
  })

  it('takes over a lock left by a process that is gone', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const keysFile = join(await tempDir(), 'keys.json')
    const lock = `${keysFile}.lock`
    const pid = await findDeadPid()
    await writeFile(lock, JSON.stringify({ token: 'left-behind', pid, host: hostname(), started_at: new Date().toISOString() }))
    const started = performance.now()
    const run = await runCli(['keys', 'create', '--keys', keysFile])
    expect(run.code, run.stderr).toBe(0)
    // Taken over at once, not after waiting out the bound (10 s).
    expect(performance.now() - started).toBeLessThan(8_000)
    expect((await readStoredKeys(keysFile)).map((record) => record.key)).toEqual([run.stdout.trim()])
    expect(existsSync(lock)).toBe(false)
  })

  it('waits for a lock that a running process holds, and goes on once it is released', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const keysFile = join(await tempDir(), 'keys.json')
    const lock = `${keysFile}.lock`
    // This test's own process is alive: the lock reads as held until it is deleted.
    await writeFile(lock, JSON.stringify({ token: 'held', pid: process.pid, host: hostname(), started_at: new Date().toISOString() }))
    let finished = false
    const pending = runCli(['keys', 'create', '--keys', keysFile]).then((run) => {
      finished = true
      return run
    })
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(finished).toBe(false)
    expect(existsSync(keysFile)).toBe(false)
    await unlink(lock)
    const run = await pending
    expect(run.code, run.stderr).toBe(0)
    expect((await readStoredKeys(keysFile)).map((record) => record.key)).toEqual([run.stdout.trim()])
  })

  it('gives up after the bound (10 s) with exit 2, naming the lock file to delete', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const keysFile = join(await tempDir(), 'keys.json')
    const lock = `${keysFile}.lock`
    await writeFile(lock, JSON.stringify({ token: 'held', pid: process.pid, host: hostname(), started_at: new Date().toISOString() }))
    const run = await runCli(['keys', 'create', '--keys', keysFile])
    expect(run.code).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr).toContain(`keys file ${keysFile} is locked by another process (pid ${process.pid}, since `)
    expect(run.stderr).toContain(`If no sandbox keys command is running, delete ${lock}`)
    expect(run.stderr).not.toMatch(/\n\s+at /)
    expect(existsSync(keysFile)).toBe(false)
    expect(existsSync(lock)).toBe(true)
  })
})
