import { existsSync } from 'node:fs'
import { readFile, symlink, utimes, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { withKeysFileLock } from '../../src/keys/keys-file-lock.js'
import { KeysError } from '../../src/keys/keys-error.js'
import { addKey, revokeKey } from '../../src/keys/manage-keys.js'
import { readKeysFile } from '../../src/keys/keys-file.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-keys-lock')

/** A lock as another running process of this host holds it (the test runner's parent runs). */
function heldLockText(): string {
  return JSON.stringify({ token: 'held-elsewhere', pid: process.ppid, host: hostname(), started_at: '2026-03-01T12:00:00.000Z' })
}

describe('withKeysFileLock', () => {
  it('runs calls of one process on one file one after another, so none is lost', async () => {
    const path = join(await tempDir(), 'keys.json')
    const records = await Promise.all(Array.from({ length: 20 }, () => addKey(path, {})))
    const first = records[0]!.key
    await Promise.all([revokeKey(path, first), addKey(path, {}), revokeKey(path, records[1]!.key)])
    const file = await readKeysFile(path)
    expect(file.keys).toHaveLength(21)
    expect(file.keys.filter((record) => record.revoked_at).map((record) => record.key).sort()).toEqual([first, records[1]!.key].sort())
    expect(existsSync(`${path}.lock`)).toBe(false)
  })

  it('gives up after timeoutMs with a KeysError naming the holder and the lock file, which it leaves', async () => {
    const path = join(await tempDir(), 'keys.json')
    await writeFile(`${path}.lock`, heldLockText())
    let ran = false
    const attempt = withKeysFileLock(path, async () => { ran = true }, { timeoutMs: 300 })
    await expect(attempt).rejects.toThrow(KeysError)
    await expect(attempt).rejects.toThrow(`keys file ${path} is locked by another process (pid ${process.ppid}, since 2026-03-01T12:00:00.000Z), which is changing it, for more than 0.3 s; try again once it has finished. If no sandbox keys command is running, delete ${path}.lock`)
    expect(ran).toBe(false)
    expect(await readFile(`${path}.lock`, 'utf8')).toBe(heldLockText())
  })

  it('waits for a lock file that names no owner yet, and takes it over once it is old', async () => {
    const path = join(await tempDir(), 'keys.json')
    await writeFile(`${path}.lock`, '')
    // Just made: its maker is writing its owner into it.
    await expect(withKeysFileLock(path, async () => 'ran', { timeoutMs: 200 })).rejects.toThrow(/is locked by another process, which/)
    // Left by a process killed between making it and writing it.
    const past = new Date(Date.now() - 60_000)
    await utimes(`${path}.lock`, past, past)
    expect(await withKeysFileLock(path, async () => 'ran', { timeoutMs: 200 })).toBe('ran')
    expect(existsSync(`${path}.lock`)).toBe(false)
  })

  it('takes over a lock of this pid that this process does not hold (an earlier process under the same pid)', async () => {
    const path = join(await tempDir(), 'keys.json')
    await writeFile(`${path}.lock`, JSON.stringify({ token: 'before-restart', pid: process.pid, host: hostname(), started_at: '2026-03-01T12:00:00.000Z' }))
    expect(await withKeysFileLock(path, async () => 'ran', { timeoutMs: 200 })).toBe('ran')
  })

  it('locks the file a symbolic link leads to, so that writers through the link and the file meet', async () => {
    const dir = await tempDir()
    const real = join(dir, 'real.json')
    const link = join(dir, 'link.json')
    await symlink('real.json', link)
    await writeFile(`${real}.lock`, heldLockText())
    await expect(withKeysFileLock(link, async () => 'ran', { timeoutMs: 200 })).rejects.toThrow(`delete ${real}.lock`)
  })

  it('leaves no directory or lock behind for a revoke of a key that is not there', async () => {
    const dir = join(await tempDir(), 'missing')
    await expect(revokeKey(join(dir, 'keys.json'), 'sk_sandbox_abcdefghijklmnopqrstuvwxyz')).rejects.toThrow(/there is no keys file/)
    expect(existsSync(dir)).toBe(false)
  })
})
