import { createStorage, defineDriver, type Storage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deriveKeyId } from '../../src/server/auth.js'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { FIRST_IDEMPOTENCY_SWEEP_MS, IDEMPOTENCY_SWEEP_MS } from '../../src/server/idempotency-expiry.js'
import type { SessionDoc } from '../../src/server/session-doc.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { buildRequest, LOAN, newKey } from '../helpers/api.js'

/** The server's check for idempotency records past their 24 hours, beside what else uses the sessions. */

let sandboxes: Sandbox[] = []
afterEach(async () => {
  vi.useRealTimers()
  await Promise.all(sandboxes.map((sandbox) => sandbox.close()))
  sandboxes = []
})

async function open(storage: Storage): Promise<Sandbox> {
  const sandbox = await createSandbox({ rateLimit: false, storage })
  sandboxes.push(sandbox)
  return sandbox
}

async function call(sandbox: Sandbox, key: string, method: string, path: string, body?: object, idempotencyKey?: string) {
  const response = await sandbox.fetch(buildRequest('http://x', method, path, { body, idempotencyKey }, key))
  return { status: response.status, body: await response.json() }
}

/** Memory storage that outlives a closed server (whose close disposes its storage), with DRIVER's overrides. */
function createKeptStorage(overrides: (memory: ReturnType<typeof memoryDriver>) => object = () => ({})): Storage {
  const memory = memoryDriver()
  return createStorage({ driver: defineDriver(() => ({ ...memory, name: 'kept-memory', dispose() {}, ...overrides(memory) }))(undefined) })
}

const docKey = (key: string) => `session:${deriveKeyId(key)}:default`

/** Sessions stored by a server that has stopped: the next one has none of them in its cache. */
async function storeSessions(storage: Storage, keys: string[]): Promise<void> {
  const first = await createSandbox({ rateLimit: false, storage })
  for (const key of keys) expect((await call(first, key, 'POST', '/api/sandbox/loans', LOAN, 'loan-0')).status).toBe(200)
  await first.close()
}

describe('the idempotency expiry check', () => {
  it('goes on to the sessions after one this version cannot read (a newer sandbox wrote it), and leaves that one as it is', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const storage = createKeptStorage()
    const [newer, idle] = [newKey('newer'), newKey('idle')]
    // Memory storage lists in the order written: the newer document comes first.
    await storeSessions(storage, [newer, idle])
    const newerDoc = { ...(await storage.getItem<SessionDoc>(docKey(newer)))!, version: 2 }
    await storage.setItem(docKey(newer), newerDoc)
    await open(storage)
    vi.setSystemTime(Date.now() + 25 * 3600_000)
    await vi.advanceTimersByTimeAsync(FIRST_IDEMPOTENCY_SWEEP_MS)
    await vi.waitFor(async () => expect((await storage.getItem<SessionDoc>(docKey(idle)))!.idempotency).toEqual([]))
    expect(await storage.getItem(docKey(newer))).toEqual(newerDoc)
  })

  it('drops the records past their 24 hours from a session that also holds later ones, and keeps the later ones', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const storage = createKeptStorage()
    const key = newKey('mixed')
    await storeSessions(storage, [key])
    vi.setSystemTime(Date.now() + 12 * 3600_000)
    const later = await createSandbox({ rateLimit: false, storage })
    expect((await call(later, key, 'POST', '/api/sandbox/loans', LOAN, 'loan-later')).status).toBe(200)
    await later.close()
    await open(storage)
    vi.setSystemTime(Date.now() + 13 * 3600_000)
    await vi.advanceTimersByTimeAsync(FIRST_IDEMPOTENCY_SWEEP_MS)
    await vi.waitFor(async () => expect((await storage.getItem<SessionDoc>(docKey(key)))!.idempotency.map((record) => record.key)).toEqual(['loan-later']))
  })

  it('rewrites no document that holds no record past its 24 hours', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const writes: string[] = []
    const storage = createKeptStorage((memory) => ({
      setItem(key: string, value: string, options: object) {
        writes.push(key)
        return memory.setItem(key, value, options)
      },
    }))
    const old = newKey('old')
    await storeSessions(storage, [old])
    vi.setSystemTime(Date.now() + 2 * 3600_000)
    await storeSessions(storage, [newKey('young'), newKey('young')])
    // Listed last (memory storage lists in the order written), the old session's expiry shows the check is over.
    const oldDoc = await storage.getItem(docKey(old))
    await storage.removeItem(docKey(old))
    await storage.setItem(docKey(old), oldDoc)
    await open(storage)
    writes.length = 0
    vi.setSystemTime(Date.now() + 23 * 3600_000)
    await vi.advanceTimersByTimeAsync(FIRST_IDEMPOTENCY_SWEEP_MS)
    await vi.waitFor(async () => expect((await storage.getItem<SessionDoc>(docKey(old)))!.idempotency).toEqual([]))
    expect(writes.filter((key) => key.startsWith('session:'))).toEqual([docKey(old)])
  })

  it('reads at its later checks only the sessions with records due, and still expires each record once its 24 hours are over', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const reads: string[] = []
    const storage = createKeptStorage((memory) => ({
      getItemRaw(key: string, options: object) {
        if (key.startsWith('session:')) reads.push(key)
        return memory.getItemRaw!(key, options)
      },
    }))
    const start = Date.now()
    const old = [newKey('old'), newKey('old'), newKey('old')]
    await storeSessions(storage, old)
    vi.setSystemTime(start + 12 * 3600_000)
    const young = Array.from({ length: 30 }, () => newKey('young'))
    await storeSessions(storage, young)
    vi.setSystemTime(start + 23 * 3600_000)
    const sandbox = await open(storage)
    reads.length = 0
    // The first check knows nothing of the stored sessions: it reads each once.
    await vi.advanceTimersByTimeAsync(FIRST_IDEMPOTENCY_SWEEP_MS)
    await vi.waitFor(() => expect(new Set(reads).size).toBe(33))
    // Within the hour, a new key and a young one make loans (their saves tell the check their records).
    const [fresh, busy] = [newKey('fresh'), young[0]!]
    for (const key of [fresh, busy]) expect((await call(sandbox, key, 'POST', '/api/sandbox/loans', LOAN, 'loan-1')).status).toBe(200)
    // Listed last (memory storage lists in the order written), an old session's expiry shows the check is over.
    const lastDoc = await storage.getItem(docKey(old[2]!))
    await storage.removeItem(docKey(old[2]!))
    await storage.setItem(docKey(old[2]!), lastDoc)
    reads.length = 0
    await vi.advanceTimersByTimeAsync(IDEMPOTENCY_SWEEP_MS)
    const records = async (key: string) => (await storage.getItem<SessionDoc>(docKey(key)))!.idempotency.map((record) => record.key)
    await vi.waitFor(async () => expect(await records(old[2]!)).toEqual([]))
    for (const key of old) expect(await records(key)).toEqual([])
    expect(reads.filter((key) => key.startsWith('session:')).sort()).toEqual(old.map(docKey).sort())
    expect(await records(busy)).toEqual(['loan-0', 'loan-1'])
    // A day after the young keys' loans, a later check drops their records, and the busy key's first.
    await vi.advanceTimersByTimeAsync(12 * IDEMPOTENCY_SWEEP_MS)
    await vi.waitFor(async () => expect(await records(young[29]!)).toEqual([]))
    for (const key of young.slice(1)) expect(await records(key)).toEqual([])
    expect(await records(busy)).toEqual(['loan-1'])
    expect(await records(fresh)).toEqual(['loan-1'])
  })

  it('writes nothing to the storage once the server is closed', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const storage = createKeptStorage()
    const key = newKey('closed')
    await storeSessions(storage, [key])
    const sandbox = await createSandbox({ rateLimit: false, storage })
    await sandbox.close()
    const before = await storage.getItem(docKey(key))
    vi.setSystemTime(Date.now() + 25 * 3600_000)
    await vi.advanceTimersByTimeAsync(FIRST_IDEMPOTENCY_SWEEP_MS)
    // A check would be over in a few turns of the event loop (memory storage).
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve))
    expect(await storage.getItem(docKey(key))).toEqual(before)
  })

  it('loses no loan created while the check rewrites the same session (a slow storage write)', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const key = newKey('busy')
    // The first write of the session's document after `armed` (the check's) waits for `release`.
    let armed = false
    let checkWriting!: () => void
    const checkWrites = new Promise<void>((resolve) => { checkWriting = resolve })
    let release!: () => void
    const released = new Promise<void>((resolve) => { release = resolve })
    const storage = createKeptStorage((memory) => ({
      async setItem(item: string, value: string, options: object) {
        if (armed && item === docKey(key)) {
          armed = false
          checkWriting()
          await released
        }
        return memory.setItem(item, value, options)
      },
    }))
    await storeSessions(storage, [key])
    const sandbox = await open(storage)
    vi.setSystemTime(Date.now() + 25 * 3600_000)
    armed = true
    await vi.advanceTimersByTimeAsync(FIRST_IDEMPOTENCY_SWEEP_MS)
    await checkWrites
    const created = call(sandbox, key, 'POST', '/api/sandbox/loans', LOAN, 'loan-during')
    // Unhindered, the request is over in a few turns of the event loop (memory storage); under the
    // session's mutex, it waits for the check's write.
    for (let turn = 0; turn < 20; turn++) await Promise.race([created, new Promise((resolve) => setImmediate(resolve))])
    release()
    const loan = await created
    expect(loan.status).toBe(200)
    await vi.waitFor(async () => expect((await storage.getItem<SessionDoc>(docKey(key)))!.idempotency.map((record) => record.key)).toEqual(['loan-during']))
    await sandbox.close()
    const next = await open(storage)
    const ids = (state: { activeLoans: { id: string }[] }) => state.activeLoans.map((active) => active.id)
    expect(ids(loan.body)).toHaveLength(2)
    expect(ids((await call(next, key, 'GET', '/api/sandbox/loans')).body)).toEqual(ids(loan.body))
  })
})
