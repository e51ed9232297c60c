import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { OPEN_SESSION_ID } from '../../src/server/auth.js'
import { deleteSessionData } from '../../src/server/delete-session.js'
import { createSandboxStorage } from '../../src/storage/create-storage.js'
import { KEEP_NEWEST, KEEP_OLDEST, SPILL_MIN } from '../../src/webhooks/delivery-spill.js'
import { createTestApi, LOAN, newKey, type TestApi } from '../helpers/api.js'
import { findClosedPort, startReceiver } from '../helpers/receiver.js'


/** The deliveries the stored session document holds (not the ones moved out of it). */
async function storedDeliveries(api: TestApi): Promise<unknown[]> {
  const [docKey] = await api.sandbox.storage.getKeys('session')
  const doc = await api.sandbox.storage.getItem<{ webhook: { deliveries: unknown[] } }>(docKey!)
  return doc!.webhook.deliveries
}

/**
 * For the tests that write hundreds of requests to fs storage and close it: the checkpoint at
 * close runs on a nice 19 thread, which beside processes that take every core took 6 s of one
 * close, and the test went past the default 20 s.
 */
const FS_BACKLOG_TIMEOUT_MS = 60_000

describe('a long backlog while the receiver is down', () => {
  it('stays out of the document each request rewrites, survives a restart, and is delivered in order, once each', { timeout: FS_BACKLOG_TIMEOUT_MS }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-backlog-'))
    const port = await findClosedPort()
    // The first delivery keeps being retried (every second) while the backlog builds up.
    const options = { storage: 'fs' as const, dataDir, allowLocalWebhooks: true, webhookRetrySchedule: Array(30).fill(1000) as number[] }
    let api: TestApi | undefined
    try {
      api = await createTestApi(options)
      await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })
      const events: string[] = []
      const deliveries: string[] = []
      for (let i = 0; i < 400; i++) {
        const { body } = await api.post('/api/sandbox/webhooks/test')
        events.push(body.event.id)
        deliveries.push(body.delivery.id)
      }
      await api.sandbox.flush()
      const kept = await storedDeliveries(api)
      // The front, the newest and less than one batch: at most 178 of the 400 (see delivery-spill.ts).
      expect(KEEP_OLDEST + KEEP_NEWEST + SPILL_MIN).toBe(178)
      expect(kept.length).toBeLessThanOrEqual(178)
      expect((await api.sandbox.storage.getKeys('whq')).length).toBeGreaterThan(0)
      // A delivery deep in the backlog is still known to the retry endpoint: queued as it is.
      const retried = await api.post('/api/sandbox/webhooks/retry', { delivery_id: deliveries[200] })
      expect(retried.status).toBe(200)
      expect(retried.body.retried).toEqual([deliveries[200]])
      const key = api.key
      await api.sandbox.close()

      const up = await startReceiver('/hook', port)
      try {
        api = await createTestApi(options)
        const received = await up.waitFor(400, 40_000)
        await api.sandbox.deliveriesIdle()
        expect(received.map((item) => item.headers['x-service-webhook-id'])).toEqual(events)
        const { body } = await api.get('/api/sandbox/webhooks', key)
        expect(body.deliveries.every((delivery: { status: string }) => delivery.status === 'delivered')).toBe(true)
        expect(await api.sandbox.storage.getKeys('whq')).toEqual([])
        expect(up.received).toHaveLength(400)
      } finally {
        await up.close()
      }
    } finally {
      await api?.sandbox.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  it('leaves no batch behind that no document lists (a crash between writing one and the other)', { timeout: FS_BACKLOG_TIMEOUT_MS }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-orphan-'))
    const port = await findClosedPort()
    const options = { storage: 'fs' as const, dataDir, allowLocalWebhooks: true, webhookRetrySchedule: [600_000] }
    let api: TestApi | undefined
    try {
      api = await createTestApi(options)
      await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })
      for (let i = 0; i < 300; i++) await api.post('/api/sandbox/webhooks/test')
      await api.sandbox.flush()
      const listed = await api.sandbox.storage.getKeys('whq')
      expect(listed.length).toBeGreaterThan(0)
      await api.sandbox.close()
      // What the crash leaves: a batch written for a document that never was (or no longer lists it).
      const files = await createSandboxStorage({ kind: 'fs', dataDir })
      const orphan = `${listed[0]!.split(':').slice(0, 3).join(':')}:999`
      await files.setItem(orphan, [])
      expect(await files.getKeys('whq')).toContain(orphan)
      await files.dispose()

      api = await createTestApi(options)
      const after = await api.sandbox.storage.getKeys('whq')
      expect(after).not.toContain(orphan)
      expect(after.sort()).toEqual([...listed].sort())
    } finally {
      await api?.sandbox.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  it('starts even when the document of a session with batches cannot be read', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-orphan-'))
    let api: TestApi | undefined
    try {
      const files = await createSandboxStorage({ kind: 'fs', dataDir })
      await files.setItemRaw('session:k1:default', 'not json')
      await files.setItem('whq:k1:default:3', [])
      await files.dispose()
      api = await createTestApi({ storage: 'fs', dataDir })
      expect((await api.get('/api/sandbox/config')).status).toBe(200)
      // Left for the session's own requests to report; nothing of it is deleted behind its back.
      expect(await api.sandbox.storage.getKeys('whq')).toEqual(['whq:k1:default:3'])
    } finally {
      await api?.sandbox.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  it('is deleted with the session (what `sandbox keys reset` does)', async () => {
    const port = await findClosedPort()
    const api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [60_000] })
    try {
      await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })
      for (let i = 0; i < 200; i++) await api.post('/api/sandbox/webhooks/test')
      expect((await api.sandbox.storage.getKeys('whq')).length).toBeGreaterThan(0)
      await deleteSessionData(api.sandbox.storage, api.key, OPEN_SESSION_ID)
      expect(await api.sandbox.storage.getKeys('whq')).toEqual([])
    } finally {
      await api.sandbox.close()
    }
  })
})

describe('forward deliveries and a server started without --webhook-forward-to', () => {
  it('wait untouched, then go out in order when a server with a forward target starts again', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-forward-wait-'))
    const port = await findClosedPort()
    const schedule = Array(20).fill(100) as number[]
    const forwarding = { storage: 'fs' as const, dataDir, webhookForwardTo: `http://127.0.0.1:${port}/hook`, webhookRetrySchedule: schedule }
    type Listed = { id: string; event_id: string; status: string; attempts: number; last_error: string | null }
    const list = async (key: string): Promise<Listed[]> => (await api!.get('/api/sandbox/webhooks', key)).body.deliveries
    let api: TestApi | undefined
    try {
      api = await createTestApi(forwarding)
      const key = api.key
      expect((await api.post('/api/sandbox/loans', LOAN)).status).toBe(200)
      await api.sandbox.deliveriesIdle()
      await api.sandbox.close()
      api = await createTestApi({ storage: 'fs', dataDir, webhookRetrySchedule: schedule })
      const before = await list(key)
      expect(before.length).toBeGreaterThan(0)
      await api.sandbox.close()

      // Every head is overdue in these starts; without a forward target none of them is tried.
      for (let start = 0; start < 3; start++) {
        api = await createTestApi({ storage: 'fs', dataDir, webhookRetrySchedule: schedule })
        await new Promise((resolve) => setTimeout(resolve, 250))
        await api.sandbox.deliveriesIdle()
        expect(await list(key)).toEqual(before)
        await api.sandbox.close()
      }

      const up = await startReceiver('/hook', port)
      try {
        api = await createTestApi(forwarding)
        const received = await up.waitFor(before.length, 10_000)
        await api.sandbox.deliveriesIdle()
        // Newest first in the log, so the receiver's order is the log's reversed.
        expect(received.map((item) => item.headers['x-service-webhook-id'])).toEqual(before.map((delivery) => delivery.event_id).reverse())
        const after = await list(key)
        expect(after.map((delivery) => delivery.status)).toEqual(before.map(() => 'delivered'))
        const head = before.findIndex((delivery) => delivery.attempts > 0)
        expect(after[head]!.attempts).toBe(before[head]!.attempts + 1)
      } finally {
        await up.close()
      }
    } finally {
      await api?.sandbox.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})

describe('a backlog of more keys than the server keeps documents of in memory', () => {
  it('is delivered from the documents in memory: no key waiting for a place in flight has its document read back from storage', async () => {
    const storage = await createSandboxStorage({ kind: 'memory' })
    let sessionReads = 0
    const getItemRaw = storage.getItemRaw.bind(storage)
    storage.getItemRaw = ((key: string, ...rest: [never]) => {
      if (key.startsWith('session:')) sessionReads++
      return getItemRaw(key, ...rest)
    }) as typeof storage.getItemRaw
    const receiver = await startReceiver('/forward')
    // Slow answers: 16 sends in flight at a time, every other key's worker waits its turn meanwhile.
    receiver.delayMs = 20
    const api = await createTestApi({ storage, webhookForwardTo: receiver.url })
    try {
      // Twice the 200 documents the session store caches.
      const keys = Array.from({ length: 400 }, () => newKey('backlog'))
      for (const key of keys) {
        const started = await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', ...LOAN }, { key })
        expect(started.status).toBe(200)
      }
      // Each key's first request looked for its document once, and found none.
      expect(sessionReads).toBe(keys.length)
      const received = await receiver.waitFor(keys.length, 20_000)
      await api.sandbox.deliveriesIdle()
      expect(new Set(received.map((item) => item.headers['x-service-webhook-id'])).size).toBe(keys.length)
      expect(sessionReads).toBe(keys.length)
    } finally {
      await api.sandbox.close()
      await receiver.close()
    }
  })
})
