import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deriveKeyId } from '../../src/server/auth.js'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { buildRequest, LOAN, newKey } from '../helpers/api.js'

/** `serve --forget-idle-keys` on a long-lived server: one sweep forgets many keys at once. */

const HOUR = 3600_000
const DAY = 24 * HOUR

let sandbox: Sandbox | undefined
afterEach(async () => {
  await sandbox?.close()
  sandbox = undefined
  vi.useRealTimers()
})

async function call(key: string, method: string, path: string, body?: object) {
  const response = await sandbox!.fetch(buildRequest('http://x', method, path, { body }, key))
  return { status: response.status, body: await response.json() }
}

describe('serve --forget-idle-keys with many keys', () => {
  it('lists storage a few times per sweep, not twice per forgotten key (each a SCAN of the whole redis database), and leaves none of their files', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] })
    // Memory storage that counts its listings: on redis each one scans every key of the database.
    const memory = memoryDriver()
    let listings = 0
    const storage = createStorage({
      driver: defineDriver(() => ({ ...memory, name: 'counted-memory', dispose() {}, getKeys: (base: string, opts: object) => { listings++; return memory.getKeys(base, opts) } }))(undefined),
    })
    const forgotten: number[] = []
    sandbox = await createSandbox({ rateLimit: false, logError: () => {}, storage, forgetIdleKeysMs: DAY, onKeysForgotten: (count) => forgotten.push(count) })
    const idle = Array.from({ length: 40 }, (_, i) => newKey(`idle${i}`))
    for (const key of idle) {
      expect((await call(key, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
      // Over 16 POSTs: idempotency records moved into batch files, which must go with the key.
      for (let i = 0; i < 17; i++) expect((await call(key, 'POST', '/api/sandbox/partner', { name: `Acme ${i}` })).status).toBe(200)
    }
    const [cut] = idle
    // A key a crash cut off midway: its document went, its batch files and stored use are left.
    await storage.removeItem(`session:${deriveKeyId(cut!)}:default`)
    const kept = newKey('kept')
    vi.setSystemTime(Date.now() + 2 * DAY)
    expect((await call(kept, 'POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
    const filesOf = async (key: string) => (await storage.getKeys()).filter((name) => name.includes(deriveKeyId(key)))
    for (const key of idle) expect((await filesOf(key)).some((name) => name.startsWith('idem:'))).toBe(true)
    listings = 0
    await vi.advanceTimersByTimeAsync(HOUR)
    await vi.waitFor(() => expect(forgotten).toEqual([idle.length]), { timeout: 30_000 })
    expect(listings).toBeLessThanOrEqual(6)
    for (const key of idle) expect(await filesOf(key)).toEqual([])
    expect((await filesOf(kept)).length).toBeGreaterThan(0)
    expect((await call(kept, 'GET', '/api/sandbox/loans')).body.activeLoans).toHaveLength(1)
    expect((await call(idle[1]!, 'GET', '/api/sandbox/loans')).body.activeLoans).toHaveLength(0)
  }, 60_000)
})
