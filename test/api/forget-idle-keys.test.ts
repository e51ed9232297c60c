import { createStorage, defineDriver, type Storage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deriveKeyId } from '../../src/server/auth.js'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox, SandboxOptions } from '../../src/server/sandbox-types.js'
import { buildRequest, LOAN, newKey } from '../helpers/api.js'
import { findFreePort } from '../helpers/free-port.js'

/** `serve --forget-idle-keys`: open-mode keys idle past the duration lose their state, and only those. */

const HOUR = 3600_000
const DAY = 24 * HOUR
const WEEK = 7 * DAY

let sandboxes: Sandbox[] = []
afterEach(async () => {
  await Promise.all(sandboxes.map((sandbox) => sandbox.close()))
  sandboxes = []
  vi.useRealTimers()
})

async function open(options: SandboxOptions): Promise<Sandbox> {
  const sandbox = await createSandbox({ rateLimit: false, logError: () => {}, ...options })
  sandboxes.push(sandbox)
  return sandbox
}

async function call(sandbox: Sandbox, key: string, method: string, path: string, body?: object) {
  const response = await sandbox.fetch(buildRequest('http://x', method, path, { body }, key))
  return { status: response.status, body: await response.json() }
}

/** Memory storage that outlives a closed server (a restart on the same data), as fs and redis do. */
function createKeptStorage(overrides: (memory: ReturnType<typeof memoryDriver>) => object = () => ({})): Storage {
  const memory = memoryDriver()
  return createStorage({ driver: defineDriver(() => ({ ...memory, name: 'kept-memory', dispose() {}, ...overrides(memory) }))(undefined) })
}

const slotOf = (key: string) => `${deriveKeyId(key)}:default`
/** Every storage key of KEY: its document, idempotency batches, spilled deliveries, stored use. */
async function listKeysOf(storage: Storage, key: string): Promise<string[]> {
  return (await storage.getKeys()).filter((name) => name.includes(deriveKeyId(key)))
}

const loanCount = async (sandbox: Sandbox, key: string) => (await call(sandbox, key, 'GET', '/api/sandbox/loans')).body.activeLoans.length

describe('serve --forget-idle-keys', () => {
  it('forgets a key unused for longer than the duration, keeps one used within it, and the forgotten key starts again empty', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const storage = createKeptStorage()
    const forgotten: number[] = []
    const sandbox = await open({ storage, forgetIdleKeysMs: WEEK, onKeysForgotten: (count) => forgotten.push(count) })
    const [idle, busy] = [newKey('idle'), newKey('busy')]
    // Over 16 POSTs: records moved into batch files too, which must go with the key.
    expect((await call(sandbox, idle, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
    for (let i = 0; i < 20; i++) expect((await call(sandbox, idle, 'POST', '/api/sandbox/partner', { name: `Acme ${i}` })).status).toBe(200)
    expect((await call(sandbox, busy, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
    expect((await listKeysOf(storage, idle)).some((name) => name.startsWith('idem:'))).toBe(true)
    vi.setSystemTime(Date.now() + 6 * DAY)
    // A read counts as use as much as a write.
    expect(await loanCount(sandbox, busy)).toBe(1)
    vi.setSystemTime(Date.now() + 2 * DAY)
    await vi.advanceTimersByTimeAsync(HOUR)
    await vi.waitFor(() => expect(forgotten).toEqual([1]))
    expect(await listKeysOf(storage, idle)).toEqual([])
    expect(await loanCount(sandbox, busy)).toBe(1)
    expect(await loanCount(sandbox, idle)).toBe(0)
    expect((await call(sandbox, idle, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
    expect(await loanCount(sandbox, idle)).toBe(1)
  })

  it('counts idle time from the use stored by the server before a restart, not from the start', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const storage = createKeptStorage()
    const [old, recent] = [newKey('old'), newKey('recent')]
    const first = await createSandbox({ rateLimit: false, storage, forgetIdleKeysMs: WEEK })
    expect((await call(first, old, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
    vi.setSystemTime(Date.now() + 5 * DAY)
    expect((await call(first, recent, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
    await first.close()
    vi.setSystemTime(Date.now() + 3 * DAY)
    const forgotten: number[] = []
    const second = await open({ storage, forgetIdleKeysMs: WEEK, onKeysForgotten: (count) => forgotten.push(count) })
    // Swept at the start, with no request of either key since.
    await vi.advanceTimersByTimeAsync(0)
    await vi.waitFor(() => expect(forgotten).toEqual([1]))
    expect(await listKeysOf(storage, old)).toEqual([])
    expect(await loanCount(second, recent)).toBe(1)
  })

  it('keeps state stored before uses were recorded (served without the flag) for the whole duration from the first sweep', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const storage = createKeptStorage()
    const key = newKey('unflagged')
    const first = await createSandbox({ rateLimit: false, storage })
    expect((await call(first, key, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
    await first.close()
    vi.setSystemTime(Date.now() + 30 * DAY)
    const forgotten: number[] = []
    await open({ storage, forgetIdleKeysMs: WEEK, onKeysForgotten: (count) => forgotten.push(count) })
    await vi.advanceTimersByTimeAsync(0)
    await vi.waitFor(async () => expect(await storage.hasItem(`keyuse:${slotOf(key)}`)).toBe(true))
    expect(await storage.hasItem(`session:${slotOf(key)}`)).toBe(true)
    vi.setSystemTime(Date.now() + WEEK + 2 * HOUR)
    await vi.advanceTimersByTimeAsync(HOUR)
    await vi.waitFor(() => expect(forgotten).toEqual([1]))
    expect(await listKeysOf(storage, key)).toEqual([])
  })

  it('keeps an idle key while a webhook delivery of it is still retrying, and forgets it once the delivery failed', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const storage = createKeptStorage()
    const forgotten: number[] = []
    // Nothing listens there: every attempt is refused.
    const url = `http://127.0.0.1:${await findFreePort()}/hooks`
    const sandbox = await open({ storage, forgetIdleKeysMs: HOUR, allowLocalWebhooks: true, webhookRetrySchedule: [DAY], onKeysForgotten: (count) => forgotten.push(count) })
    const key = newKey('hooked')
    expect((await call(sandbox, key, 'POST', '/api/sandbox/webhooks', { url })).status).toBe(200)
    expect((await call(sandbox, key, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
    const statuses = async () => ((await call(sandbox, key, 'GET', '/api/sandbox/webhooks')).body.deliveries as Array<{ status: string }>).map((delivery) => delivery.status)
    await vi.waitFor(async () => expect(await statuses()).toEqual(['retrying']))
    // Written to storage, as a restart would find it.
    await sandbox.flush()
    // Idle past the hour, its retry a day away: the sweeps (every 15 minutes) keep it.
    vi.setSystemTime(Date.now() + 3 * HOUR)
    for (let i = 0; i < 4; i++) await vi.advanceTimersByTimeAsync(15 * 60_000)
    await new Promise((resolve) => setImmediate(resolve))
    expect(forgotten).toEqual([])
    expect(await storage.hasItem(`session:${slotOf(key)}`)).toBe(true)
    // The retry comes; refused again, it is the schedule's last, and the next sweep forgets the key.
    vi.setSystemTime(Date.now() + DAY)
    await vi.waitFor(async () => {
      await vi.advanceTimersByTimeAsync(15 * 60_000)
      expect(forgotten).toEqual([1])
    })
    expect(await listKeysOf(storage, key)).toEqual([])
  })

  it('leaves a key cut off midway (storage failing, or a crash, after its document went) empty, and the next sweep deletes the rest', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    let failing = false
    const storage = createKeptStorage((memory) => ({
      removeItem(key: string, options: object) {
        if (failing && key.startsWith('idem:')) throw new Error('EIO: the disk went away')
        return memory.removeItem!(key, options)
      },
    }))
    const forgotten: number[] = []
    const sandbox = await open({ storage, forgetIdleKeysMs: WEEK, onKeysForgotten: (count) => forgotten.push(count) })
    const key = newKey('cut')
    expect((await call(sandbox, key, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
    for (let i = 0; i < 20; i++) expect((await call(sandbox, key, 'POST', '/api/sandbox/partner', { name: `Acme ${i}` })).status).toBe(200)
    failing = true
    vi.setSystemTime(Date.now() + 8 * DAY)
    await vi.advanceTimersByTimeAsync(HOUR)
    await vi.waitFor(async () => expect(await storage.hasItem(`session:${slotOf(key)}`)).toBe(false))
    await new Promise((resolve) => setImmediate(resolve))
    expect(forgotten).toEqual([])
    const left = await listKeysOf(storage, key)
    expect(left.some((name) => name.startsWith('idem:'))).toBe(true)
    expect(left).toContain(`keyuse:${slotOf(key)}`)
    failing = false
    await vi.advanceTimersByTimeAsync(HOUR)
    await vi.waitFor(() => expect(forgotten).toEqual([1]))
    expect(await listKeysOf(storage, key)).toEqual([])
    expect(await loanCount(sandbox, key)).toBe(0)
  })

  it('answers the requests of a key while storage refuses the write of its use, trying that write again only 30 s later', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const attempts: string[] = []
    const storage = createKeptStorage((memory) => ({
      setItem(key: string, value: string, options: object) {
        if (key.startsWith('keyuse:')) {
          attempts.push(key)
          throw new Error('READONLY You can\'t write against a read only replica.')
        }
        return memory.setItem!(key, value, options)
      },
    }))
    const sandbox = await open({ storage, forgetIdleKeysMs: WEEK })
    const key = newKey('refused')
    for (let i = 0; i < 3; i++) expect((await call(sandbox, key, 'GET', '/api/sandbox/loans')).status).toBe(200)
    expect(attempts).toHaveLength(1)
    vi.setSystemTime(Date.now() + 31_000)
    expect((await call(sandbox, key, 'GET', '/api/sandbox/loans')).status).toBe(200)
    expect(attempts).toHaveLength(2)
  })

  it('leaves sessions of registered keys (another session id) alone', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    const storage = createKeptStorage()
    const doc = { version: 1, created_at: new Date().toISOString() }
    await storage.setItem(`session:${deriveKeyId(newKey('registered'))}:s_0123456789abcdef`, doc)
    vi.setSystemTime(Date.now() + 30 * DAY)
    const sandbox = await open({ storage, forgetIdleKeysMs: WEEK })
    await vi.advanceTimersByTimeAsync(0)
    vi.setSystemTime(Date.now() + 30 * DAY)
    await vi.advanceTimersByTimeAsync(HOUR)
    expect(sandbox).toBeDefined()
    expect((await storage.getKeys()).filter((name) => name.startsWith('session:') || name.startsWith('keyuse:'))).toHaveLength(1)
  })

  it('is refused with a keys file, whose keys keep their state until keys reset', async () => {
    await expect(createSandbox({ keysFile: 'keys.json', forgetIdleKeysMs: WEEK })).rejects.toThrow(/forgetIdleKeysMs forgets the keys of open mode; keys of keysFile .*drop one of the two/)
    await expect(createSandbox({ forgetIdleKeysMs: 0 })).rejects.toThrow(/forgetIdleKeysMs 0: expected milliseconds/)
  })
})
