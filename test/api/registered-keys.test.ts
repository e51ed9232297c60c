import { mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SandboxStorage } from '../../src/storage/sandbox-storage.js'
import { createTestApi, newKey, buildRequest, type TestApi } from '../helpers/api.js'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { deriveKeyId } from '../../src/server/auth.js'
import { readRequestLog } from '../../src/server/read-request-log.js'
import { deleteSessionData } from '../../src/server/delete-session.js'
import { resetKeySession } from '../../src/keys/manage-keys.js'
import { createSandboxStorage } from '../../src/storage/create-storage.js'
import { startReceiver } from '../helpers/receiver.js'
import { installWallClock } from '../helpers/wall-clock.js'

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
    // Revoked at a time the clock has not reached: the clock was set back after `keys revoke`.
    const revokedLater = newKey('revoked_later')
    await writeKeys([
      { key: good },
      { key: revoked, revoked_at: new Date(Date.now() - 1000).toISOString() },
      { key: revokedLater, revoked_at: new Date(Date.now() + 3_600_000).toISOString() },
      { key: expired, expires_at: new Date(Date.now() - 1000).toISOString() },
    ])
    api = await createTestApi({ keysFile })
    expect(await status(good)).toEqual([200, null])
    expect(await status(newKey('stranger'))).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
    expect(await status(revoked)).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
    expect(await status(revokedLater)).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
    expect(await status(expired)).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
    // A registered key's refused requests are logged under it, so its owner can see why; a key the
    // file does not have is not stored, so strangers cannot roll the log over.
    await api.sandbox.flush()
    const logged = await readRequestLog(api.sandbox.storage, { apiKey: revoked })
    expect(logged.map((entry) => [entry.path, entry.status, entry.error_code])).toEqual([['/api/sandbox/loans', 401, 'SANDBOX_API_KEY_INVALID']])
    expect(logged[0]!.key).toMatch(/^sk_sandbox_/)
    expect(logged[0]!.key).not.toBe(revoked)
    expect(await readRequestLog(api.sandbox.storage, { apiKey: expired })).toHaveLength(1)
    expect(await readRequestLog(api.sandbox.storage)).toHaveLength(4)

    // With the rate limit on, a refused registered key still shows its window; a stranger's has none.
    await api.sandbox.close()
    api = await createTestApi({ keysFile, rateLimit: { limit: 120, windowSeconds: 60 } })
    expect((await api.get('/api/sandbox/loans', revoked)).headers.get('ratelimit-remaining')).toBe('120')
    expect((await api.get('/api/sandbox/loans', newKey('stranger'))).headers.get('ratelimit-limit')).toBeNull()
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

  it('keeps the last good keys when the file breaks while running, and says so once per problem', async () => {
    const key = newKey('kept')
    await writeKeys([{ key }])
    const problems: string[] = []
    api = await createTestApi({ keysFile, logError: (error) => problems.push(`${(error as Error).name}: ${(error as Error).message}`) })
    const pause = () => new Promise((resolve) => setTimeout(resolve, 300))
    await writeFile(keysFile, '{broken')
    for (let i = 0; i < 3; i++) {
      await pause()
      expect(await status(key)).toEqual([200, null])
    }
    expect(problems).toEqual([expect.stringMatching(new RegExp(`^SetupError: keys file ${keysFile}: not valid JSON \\(line 1, column 2\\): .+; the server keeps the 1 keys it read before$`))])
    await writeKeys([{ key }])
    await pause()
    expect(await status(key)).toEqual([200, null])
    await rm(keysFile)
    await pause()
    expect(await status(key)).toEqual([200, null])
    expect(problems).toHaveLength(2)
    expect(problems[1]).toBe(`SetupError: keys file ${keysFile} cannot be read (ENOENT); the server keeps the 1 keys it read before`)
  })

  it('refuses to start on a missing keys file with an actionable message', async () => {
    await expect(createTestApi({ keysFile: join(dir, 'absent.json') })).rejects.toThrow(/sandbox keys create/)
  })
})

describe('sandbox keys reset on a running server', () => {
  const LOAN = { collateral_btc: 0.1, loan_amount: 1000 }

  /** Storage keys (session document, stored answers) of one session of a key. */
  async function storedKeysOf(storage: SandboxStorage, key: string, sessionId: string): Promise<string[]> {
    const keyId = deriveKeyId(key)
    const keys = [...await storage.getKeys('session'), ...await storage.getKeys('idem')]
    return keys.filter((item) => item.includes(`${keyId}:${sessionId}`))
  }

  it('sees a reset whose keys file has the time and size of the one before (a file system with 1-2 s times: FAT32, HFS+)', async () => {
    const key = newKey('coarse')
    await writeKeys([{ key }])
    api = await createTestApi({ keysFile })
    const loans = async () => (await api!.get('/api/sandbox/loans', key)).body.activeLoans as unknown[]
    expect((await api.post('/api/sandbox/loans', LOAN, { key })).status).toBe(200)
    // Times in whole seconds, as such a file system keeps them (and as utimes sets them exactly).
    const tick = Math.floor(Date.now() / 1000)
    await resetKeySession(keysFile, key)
    await utimes(keysFile, tick, tick)
    await expect.poll(loans).toEqual([])
    expect((await api.post('/api/sandbox/loans', LOAN, { key })).status).toBe(200)
    expect(await loans()).toHaveLength(1)
    const before = await stat(keysFile)
    // Another reset in the same tick: the same size (a session id is always as long), the same time.
    await resetKeySession(keysFile, key)
    await utimes(keysFile, tick, tick)
    const after = await stat(keysFile)
    expect([after.mtimeMs, after.size]).toEqual([before.mtimeMs, before.size])
    await expect.poll(loans, { timeout: 3000 }).toEqual([])
  })

  it('deletes the ended session from memory storage, which no tool can reach', async () => {
    const key = newKey('reset')
    await writeKeys([{ key }])
    api = await createTestApi({ keysFile })
    expect((await api.post('/api/sandbox/loans', LOAN, { key })).status).toBe(200)
    expect(await storedKeysOf(api.sandbox.storage, key, 'ses_1')).not.toEqual([])
    const { after } = await resetKeySession(keysFile, key)
    await new Promise((resolve) => setTimeout(resolve, 300))
    // The next request reads the changed keys file, and the server deletes the old session.
    expect((await api.get('/api/sandbox/loans', key)).body.activeLoans).toEqual([])
    await expect.poll(() => storedKeysOf(api!.sandbox.storage, key, 'ses_1')).toEqual([])
    expect(after.session_id).not.toBe('ses_1')
  })

  it('deletes the ended session on fs storage for good, even while its last write is still in the journal', async () => {
    const key = newKey('reset')
    await writeKeys([{ key }])
    const dataDir = join(dir, 'data')
    const sandbox = await createSandbox({ storage: 'fs', dataDir, keysFile, rateLimit: false, logError: () => {} })
    const send = (request: Request) => sandbox.fetch(request)
    expect((await send(buildRequest('http://x', 'POST', '/api/sandbox/loans', { body: LOAN }, key))).status).toBe(200)
    // What `sandbox keys reset` does: the keys file changes, and the tool deletes the files it sees.
    await resetKeySession(keysFile, key)
    const tool = await createSandboxStorage({ kind: 'fs', dataDir })
    await deleteSessionData(tool, key, 'ses_1')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await send(buildRequest('http://x', 'GET', '/api/sandbox/loans', {}, key))).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 100))
    await sandbox.close()
    expect(await storedKeysOf(tool, key, 'ses_1')).toEqual([])
  })

  it('does not bring the ended session back when a delivery in flight finishes after it was deleted', async () => {
    const key = newKey('reset')
    await writeKeys([{ key }])
    const receiver = await startReceiver()
    try {
      receiver.delayMs = 400
      api = await createTestApi({ keysFile, allowLocalWebhooks: true })
      expect((await api.post('/api/sandbox/webhooks', { url: receiver.url }, { key })).status).toBe(200)
      expect((await api.post('/api/sandbox/loans', LOAN, { key })).status).toBe(200)
      await receiver.waitFor(1)
      await resetKeySession(keysFile, key)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect((await api.get('/api/sandbox/loans', key)).status).toBe(200)
      await expect.poll(() => storedKeysOf(api!.sandbox.storage, key, 'ses_1')).toEqual([])
      await api.sandbox.deliveriesIdle()
      await api.sandbox.flush()
      expect(await storedKeysOf(api.sandbox.storage, key, 'ses_1')).toEqual([])
    } finally {
      await receiver.close()
    }
  })
  it('refuses a write that was authenticated before the reset and ran after it, instead of storing the ended session again', async () => {
    const key = newKey('reset')
    await writeKeys([{ key }])
    api = await createTestApi({ keysFile })
    expect((await api.post('/api/sandbox/loans', LOAN, { key })).status).toBe(200)
    // A body still arriving: the request is authenticated on the old session and waits for it.
    let finish!: (text: string) => void
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        finish = (text) => { controller.enqueue(new TextEncoder().encode(text)); controller.close() }
      },
    })
    const late = api.sandbox.fetch(new Request('http://x/api/sandbox/loans', {
      method: 'POST', body, duplex: 'half',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'late-write' },
    } as RequestInit))
    await resetKeySession(keysFile, key)
    await new Promise((resolve) => setTimeout(resolve, 300))
    // The next request reads the changed keys file, and the server deletes the old session.
    expect((await api.get('/api/sandbox/loans', key)).body.activeLoans).toEqual([])
    await expect.poll(() => storedKeysOf(api!.sandbox.storage, key, 'ses_1')).toEqual([])
    finish(JSON.stringify(LOAN))
    const answer = await late
    expect([answer.status, (await answer.json()).error_code]).toEqual([401, 'SANDBOX_SESSION_REQUIRED'])
    await api.sandbox.flush()
    expect(await storedKeysOf(api.sandbox.storage, key, 'ses_1')).toEqual([])
  })
})

describe('registered keys when the wall clock is set back', () => {
  it('still picks up keys file changes within a second', async () => {
    const key = newKey('clock')
    await writeKeys([{ key }])
    api = await createTestApi({ keysFile })
    expect(await status(key)).toEqual([200, null])
    const clock = installWallClock()
    try {
      clock.jump(-3_600_000)
      const added = newKey('added')
      await writeKeys([{ key, revoked_at: new Date().toISOString() }, { key: added }])
      await new Promise((resolve) => setTimeout(resolve, 400))
      expect(await status(added)).toEqual([200, null])
      expect(await status(key)).toEqual([401, 'SANDBOX_API_KEY_INVALID'])
    } finally {
      clock.restore()
    }
  })
})
