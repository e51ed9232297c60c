import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

/** `replayCrashed` (keys reset): a killed server's journals are replayed by the tool, a running server's are left to it. */
const tempDir = useTempDirs('sandbox-replay-crashed')

describe('a tool that deletes, on a data dir with journals', () => {
  it('leaves a running server its lock and journal', async () => {
    const dir = await tempDir()
    const server = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    await server.setItem('session:k1:default', { a: 1 })
    const lock = await readFile(join(dir, 'server.lock'), 'utf8')
    const tool = await createSandboxStorage({ kind: 'fs', dataDir: dir, replayCrashed: true })
    await tool.removeItem('session:k9:default')
    await tool.dispose()
    expect(await readFile(join(dir, 'server.lock'), 'utf8')).toBe(lock)
    expect(await server.getItem('session:k1:default')).toEqual({ a: 1 })
    await server.dispose()
  })

  it('replays a killed server\'s journal first, so its own deletion is what the next start finds', async () => {
    const dir = await tempDir()
    const server = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    await server.setItem('session:k1:default', { a: 1 })
    // As a kill -9 leaves it: the journal, and the lock of a process that no longer runs.
    const record = JSON.parse(await readFile(join(dir, 'server.lock'), 'utf8'))
    const journals = (await readdir(dir)).filter((name) => name.startsWith('journal-'))
    expect(journals).not.toEqual([])
    const copies = await Promise.all(journals.map(async (name) => [name, await readFile(join(dir, name))] as const))
    await server.dispose()
    for (const [name, bytes] of copies) await writeFile(join(dir, name), bytes)
    await writeFile(join(dir, 'server.lock'), JSON.stringify({ ...record, token: 'killed', pid: 2 ** 22 + 1 }))

    const tool = await createSandboxStorage({ kind: 'fs', dataDir: dir, replayCrashed: true })
    await tool.removeItem('session:k1:default')
    await tool.dispose()
    expect((await readdir(dir)).filter((name) => name.startsWith('journal-') || name === 'server.lock')).toEqual([])
    const next = await createSandboxStorage({ kind: 'fs', dataDir: dir, owner: true })
    expect(await next.getItem('session:k1:default')).toBeNull()
    await next.dispose()
  })
})
