import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, LOAN, type TestApi } from '../helpers/api.js'
import { startReceiver } from '../helpers/receiver.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

/** A memory driver whose writes can be made to fail, like a full or vanished disk. */
function createFlakyStorage() {
  const memory = memoryDriver()
  const state = { failWrites: false, failPrefix: '' }
  const flaky = defineDriver(() => ({
    ...memory,
    name: 'flaky-memory',
    setItem(key: string, value: string) {
      if (state.failWrites && key.startsWith(state.failPrefix)) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
      return memory.setItem!(key, value, {})
    },
  }))
  return { storage: createStorage({ driver: flaky(undefined) }), state }
}

describe('storage failure', () => {
  it('answers 500 SANDBOX_API_KEY_DATABASE_REQUIRED and changes nothing', async () => {
    const { storage, state } = createFlakyStorage()
    api = await createTestApi({ storage })
    expect((await api.post('/api/sandbox/loans', LOAN)).status).toBe(200)
    const before = (await api.get('/api/sandbox/loans')).body

    state.failWrites = true
    const failed = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'during-outage' })
    expect(failed.status).toBe(500)
    expect(failed.body.error_code).toBe('SANDBOX_API_KEY_DATABASE_REQUIRED')
    expect(failed.body.error).not.toMatch(/at .*\.ts/)

    state.failWrites = false
    const after = (await api.get('/api/sandbox/loans')).body
    expect({ ...after, request_id: 0 }).toEqual({ ...before, request_id: 0 })
    // 5xx is not stored: the same key now runs the operation.
    const retried = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'during-outage' })
    expect(retried.status).toBe(200)
    expect(retried.body.idempotency_replayed).toBe(false)
    expect(retried.body.activeLoans).toHaveLength(2)
  })

  it('tells a read that failed to retry it, and only a write to retry with the same Idempotency-Key', async () => {
    // Storage that answers nothing, as a redis gone: the key's document is not held in memory.
    const memory = memoryDriver()
    const state = { down: true }
    const refuse = <T>(call: () => T): T => {
      if (state.down) throw new Error('ECONNREFUSED')
      return call()
    }
    const down = defineDriver(() => ({
      ...memory,
      name: 'down-memory',
      getItem: (key: string) => refuse(() => memory.getItem(key, {})),
      getItemRaw: (key: string) => refuse(() => memory.getItemRaw!(key, {})),
      hasItem: (key: string) => refuse(() => memory.hasItem(key, {})),
      setItem: (key: string, value: string) => refuse(() => memory.setItem!(key, value, {})),
    }))
    api = await createTestApi({ storage: createStorage({ driver: down(undefined) }) })
    for (const path of ['/api/sandbox/loans', '/api/sandbox/state', '/api/sandbox/webhooks']) {
      const read = await api.get(path)
      expect([read.status, read.body.error_code]).toEqual([500, 'SANDBOX_API_KEY_DATABASE_REQUIRED'])
      expect(read.body.error).toBe('The sandbox storage could not be read. This request changes nothing: retry it (the server log says why storage failed).')
    }
    const write = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'while-down' })
    expect([write.status, write.body.error_code]).toEqual([500, 'SANDBOX_API_KEY_DATABASE_REQUIRED'])
    expect(write.body.error).toContain('retry with the same Idempotency-Key')
    // Back, so that the close writes the request log.
    state.down = false
  })

  it('answers 500 SANDBOX_API_KEY_DATABASE_REQUIRED when only the batch file of older stored answers cannot be written', async () => {
    const { storage, state } = createFlakyStorage()
    api = await createTestApi({ storage })
    // Sixteen stored answers stay in the document; the seventeenth request moves them to a batch file.
    for (let i = 0; i < 16; i++) expect((await api.post('/api/sandbox/partner', { name: `P${i}` })).status).toBe(200)
    Object.assign(state, { failWrites: true, failPrefix: 'idem' })
    const failed = await api.post('/api/sandbox/partner', { name: 'Seventeen' })
    expect([failed.status, failed.body.error_code]).toEqual([500, 'SANDBOX_API_KEY_DATABASE_REQUIRED'])
  })

  it('answers 500 SANDBOX_API_KEY_DATABASE_REQUIRED for a stored document that is not JSON, and reads one stored as bytes', async () => {
    const storage = createStorage({ driver: memoryDriver() })
    const writer = await createTestApi({ storage })
    try {
      expect((await writer.post('/api/sandbox/loans', LOAN)).status).toBe(200)
      const [docKey] = await storage.getKeys('session')
      const text = await storage.getItemRaw<string>(docKey!)
      // A second server on the same storage reads the document from storage, not from its cache.
      api = await createTestApi({ storage })
      await storage.setItemRaw(docKey!, '{"version":1,"book":')
      const broken = await api.get('/api/sandbox/loans', writer.key)
      expect(broken.status).toBe(500)
      expect(broken.body.error_code).toBe('SANDBOX_API_KEY_DATABASE_REQUIRED')
      // JSON, but not a session (a file replaced by hand): the same, not a crash in the domain code.
      for (const other of ['{"version":1}', '[]', '"text"']) {
        await storage.setItemRaw(docKey!, other)
        const wrong = await api.get('/api/sandbox/loans', writer.key)
        expect([other, wrong.status, wrong.body.error_code]).toEqual([other, 500, 'SANDBOX_API_KEY_DATABASE_REQUIRED'])
      }

      await storage.setItemRaw(docKey!, new TextEncoder().encode(text!))
      const read = await api.get('/api/sandbox/loans', writer.key)
      expect(read.status).toBe(200)
      expect(read.body.activeLoans).toHaveLength(1)
    } finally {
      await writer.sandbox.close()
    }
  })

  it('keeps delivering webhooks after the record of an attempt could not be written', async () => {
    const { storage, state } = createFlakyStorage()
    const receiver = await startReceiver()
    try {
      api = await createTestApi({ storage, allowLocalWebhooks: true })
      await api.post('/api/sandbox/webhooks', { url: receiver.url })
      // The disk fills while the receiver answers: recording the delivery fails.
      receiver.respond = () => {
        state.failWrites = true
        return 200
      }
      await api.post('/api/sandbox/webhooks/test')
      await receiver.waitFor(1)
      await api.sandbox.deliveriesIdle()
      receiver.respond = () => 200
      state.failWrites = false
      // Nothing else happens on the key: the delivery worker has to come back by itself, and
      // write the record it holds rather than send the accepted delivery again.
      const deadline = Date.now() + 8000
      const stored = async () => {
        const [docKey] = await storage.getKeys('session')
        return JSON.parse(await storage.getItemRaw<string>(docKey!) as string).webhook.deliveries[0]
      }
      while ((await stored()).status !== 'delivered' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
      expect(await stored()).toMatchObject({ status: 'delivered', attempts: 1 })
      expect(receiver.received).toHaveLength(1)
      // And the key's next event goes out as usual.
      await api.post('/api/sandbox/webhooks/test')
      await receiver.waitFor(2)
      await api.sandbox.deliveriesIdle()
      expect((await api.get('/api/sandbox/webhooks')).body.deliveries.map((delivery: { status: string; attempts: number }) => [delivery.status, delivery.attempts])).toEqual([['delivered', 1], ['delivered', 1]])
    } finally {
      await receiver.close()
    }
  })
})

describe('setup failures, as the library reports them', () => {
  it('rejects storage it cannot open with the exported StorageError, and a bad config or forward URL with SetupError', async () => {
    const { createSandbox, SetupError, StorageError } = await import('../../src/index.js')
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-setup-'))
    try {
      const file = join(dir, 'plain-file')
      await writeFile(file, 'x')
      for (const options of [{ storage: 'fs', dataDir: file }, { storage: 'bogus' as never }] as const) {
        await expect(createSandbox({ ...options, logError: () => {} })).rejects.toBeInstanceOf(StorageError)
      }
      await expect(createSandbox({ storage: 'memory', config: { risk: { max_ltv_percent: -1 } } })).rejects.toBeInstanceOf(SetupError)
      await expect(createSandbox({ storage: 'memory', webhookForwardTo: 'ftp://127.0.0.1/hooks' })).rejects.toBeInstanceOf(SetupError)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('gives the data dir back when a start fails after taking it, so a second start in the process can have it', async () => {
    const { createSandbox } = await import('../../src/index.js')
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-setup-'))
    try {
      // A file where the webhook markers' directory belongs: listing them to resume deliveries fails.
      await writeFile(join(dir, 'webhooks'), 'not a directory')
      await expect(createSandbox({ storage: 'fs', dataDir: dir, logError: () => {} })).rejects.toThrow('ENOTDIR')
      await rm(join(dir, 'webhooks'))
      const again = await createSandbox({ storage: 'fs', dataDir: dir, logError: () => {} })
      await again.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
