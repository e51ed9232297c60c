import { cp, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { deleteSessionData } from '../../src/server/delete-session.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-nested-reset')
// Written by serve at 718bacf (nested layout, before 9a55bae): key "reset-me" has an endpoint
// whose receiver was down, a loan and 22 POSTs (one stored-answers batch); "keep-me" one loan.
const FIXTURE = fileURLToPath(new URL('../fixtures/nested-layout-718bacf', import.meta.url))

describe('sandbox keys reset on a data dir of the nested layout', () => {
  it('deletes the session before the first serve of this version moves the files', async () => {
    const dir = await tempDir()
    await cp(FIXTURE, dir, { recursive: true })
    const { keys } = JSON.parse(await readFile(join(dir, 'keys.json'), 'utf8')) as { keys: Array<{ key: string; session_id: string }> }
    const [reset, kept] = keys as [{ key: string; session_id: string }, { key: string; session_id: string }]

    // What the CLI's reset does with no server running: storage it does not own.
    const tool = await createSandboxStorage({ kind: 'fs', dataDir: join(dir, 'data') })
    // What it lists it can read (`sandbox logs` before the first serve of this version).
    const listed = await tool.getKeys('session')
    expect(listed).toHaveLength(2)
    for (const key of listed) expect(await tool.getItemRaw(key)).not.toBeNull()
    await deleteSessionData(tool, reset.key, reset.session_id)
    await tool.dispose()

    // The next serve moves what is left to the flat layout; the reset session must not come back
    // (it did, with its 22 stored answers and its waiting webhooks, which serve then delivered).
    const owned = await createSandboxStorage({ kind: 'fs', dataDir: join(dir, 'data'), owner: true })
    const sessions = await owned.getKeys('session')
    expect(sessions.some((name) => name.endsWith(reset.session_id))).toBe(false)
    expect(sessions.some((name) => name.endsWith(kept.session_id))).toBe(true)
    expect(await owned.getKeys('idem')).toEqual([])
    await owned.dispose()
  })
})
