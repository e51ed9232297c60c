import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestApi, LOAN, newKey, type TestApi } from '../helpers/api.js'
import { resetKeySession, revokeKey } from '../../src/keys/manage-keys.js'

let api: TestApi | undefined
let dir: string
let keysFile: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandbox-keys-reload-'))
  keysFile = join(dir, 'keys.json')
})
afterEach(async () => {
  await api?.sandbox.close()
  api = undefined
  await rm(dir, { recursive: true, force: true })
})

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function startWithKey(key: string, storage: 'memory' | 'fs' = 'memory'): Promise<TestApi> {
  const record = { key, label: null, created_at: new Date().toISOString(), expires_at: null, revoked_at: null, session_id: 'ses_1' }
  await writeFile(keysFile, JSON.stringify({ version: 1, keys: [record] }))
  return createTestApi({ keysFile, ...(storage === 'fs' ? { storage: 'fs', dataDir: join(dir, 'data') } : {}) })
}

// A burst of requests made well after a keys file change: the first one makes the server read the
// file again, and the others arrive while it reads. Each must be judged by the file as changed.
describe('keys file changes seen by every request of a burst', () => {
  it.each(['memory', 'fs'] as const)('keeps the writes of a burst made after `keys reset` in the new session (%s storage)', async (storage) => {
    const key = newKey('burst')
    api = await startWithKey(key, storage)
    expect((await api.post('/api/sandbox/loans', LOAN, { key })).status).toBe(200)
    await resetKeySession(keysFile, key)
    await pause(400)
    const answers = await Promise.all(Array.from({ length: 10 }, () => api!.post('/api/sandbox/loans', { ...LOAN, collateral_btc: 0.1, loan_amount: 1000 }, { key })))
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200))
    // Every answered loan is in the key's state: none went to the session the reset ended.
    const state = await api.get('/api/sandbox/loans', key)
    expect(state.body.activeLoans).toHaveLength(10)
  })

  it('refuses every request of a burst made after `keys revoke`', async () => {
    const key = newKey('burst')
    api = await startWithKey(key)
    expect((await api.get('/api/sandbox/loans', key)).status).toBe(200)
    await revokeKey(keysFile, key)
    await pause(400)
    const answers = await Promise.all(Array.from({ length: 10 }, () => api!.get('/api/sandbox/loans', key)))
    expect(answers.map((answer) => `${answer.status} ${answer.body.error_code}`)).toEqual(Array(10).fill('401 SANDBOX_API_KEY_INVALID'))
  })
})
