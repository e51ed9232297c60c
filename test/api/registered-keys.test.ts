import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createTestApi, newKey, type TestApi } from '../helpers/api.js'

let api: TestApi | undefined
let dir: string
let keysFile: string

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandbox-keys-'))
  keysFile = join(dir, 'keys.json')
})
afterEach(async () => {
  await api?.sandbox.close()
  api = undefined
  await rm(dir, { recursive: true, force: true })
})

interface Entry { key: string; expires_at?: string | null; revoked_at?: string | null; session_id?: string | null }

async function writeKeys(entries: Entry[]): Promise<void> {
  const keys = entries.map((entry) => ({
    label: null, created_at: new Date().toISOString(), expires_at: null, revoked_at: null, session_id: 'ses_1', ...entry,
  }))
  await writeFile(keysFile, JSON.stringify({ version: 1, keys }))
}

const status = async (key: string) => {
  const answer = await api!.get('/api/sandbox/loans', key)
  return [answer.status, answer.body.error_code ?? null]
}

describe('registered keys (--keys FILE)', () => {
  it('accepts registered keys and refuses unknown, revoked and expired ones', async () => {
    const good = newKey('good')
    const revoked = newKey('revoked')
    const expired = newKey('expired')
    await writeKeys([
      { key: good },
      { key: revoked, revoked_at: new Date(Date.now() - 1000).toISOString() },
      { key: expired, expires_at: new Date(Date.now() - 1000).toISOString() },
    ])
    api = await createTestApi({ keysFile })
    expect(await status(good)).toEqual([200, null])
    expect(await status(newKey('stranger'))).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
    expect(await status(revoked)).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
    expect(await status(expired)).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
  })

  it('answers SANDBOX_SESSION_REQUIRED for a key whose session was dropped', async () => {
    const dropped = newKey('dropped')
    await writeKeys([{ key: dropped, session_id: null }])
    api = await createTestApi({ keysFile })
    expect(await status(dropped)).toEqual([401, 'SANDBOX_SESSION_REQUIRED'])
  })

  it('picks up changes to the keys file while running, and a new session starts empty', async () => {
    const key = newKey('live')
    await writeKeys([{ key, session_id: 'ses_a' }])
    api = await createTestApi({ keysFile })
    expect((await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 }, { key })).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 300))
    await writeKeys([{ key, session_id: 'ses_b' }])
    await new Promise((resolve) => setTimeout(resolve, 300))
    const fresh = await api.get('/api/sandbox/loans', key)
    expect(fresh.status).toBe(200)
    expect(fresh.body.activeLoans).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 300))
    await writeKeys([{ key, revoked_at: new Date().toISOString() }])
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await status(key)).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
  })

  it('refuses to start on a missing keys file with an actionable message', async () => {
    await expect(createTestApi({ keysFile: join(dir, 'absent.json') })).rejects.toThrow(/sandbox keys create/)
  })
})
