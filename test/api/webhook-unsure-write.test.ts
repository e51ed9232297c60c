import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, LOAN, type TestApi } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

/**
 * Memory storage whose next session write can be made to land and still reject: what a redis that
 * stopped answering for longer than the command timeout does with a write it then carries out.
 * Disposing keeps the data, so a second server can start on what the first left.
 */
function createUnsureStorage() {
  const memory = memoryDriver()
  const state = { landThenFail: 0 }
  const unsure = defineDriver(() => ({
    ...memory,
    name: 'unsure-memory',
    async setItem(key: string, value: string) {
      await memory.setItem!(key, value, {})
      if (state.landThenFail > 0 && key.startsWith('session:')) {
        state.landThenFail--
        throw new Error('Command timed out')
      }
    },
    dispose() {},
  }))
  return { storage: createStorage({ driver: unsure(undefined) }), state }
}

const apis: TestApi[] = []
let receiver: TestReceiver | undefined
afterEach(async () => {
  for (const api of apis.splice(0)) await api.sandbox.close()
  await receiver?.close()
  receiver = undefined
})

/** A sandbox on `storage` with the receiver as the endpoint of its key, and one loan delivered. */
async function startWithDelivery(storage: ReturnType<typeof createStorage>): Promise<TestApi> {
  receiver = await startReceiver('/ok')
  const api = await createTestApi({ storage, allowLocalWebhooks: true })
  apis.push(api)
  expect((await api.post('/api/sandbox/webhooks', { url: receiver.url })).status).toBe(200)
  expect((await api.post('/api/sandbox/loans', LOAN)).status).toBe(200)
  await receiver.waitFor(1)
  await api.sandbox.deliveriesIdle()
  return api
}

describe('a session write whose outcome was unknown (it failed, yet landed)', () => {
  it('has its deliveries sent once storage answers, and later events behind them too', async () => {
    const { storage, state } = createUnsureStorage()
    const api = await startWithDelivery(storage)

    state.landThenFail = 1
    const failed = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'unsure-2' })
    expect([failed.status, failed.body.error_code]).toEqual([500, 'SANDBOX_API_KEY_DATABASE_REQUIRED'])
    // Nothing told the dispatcher of this write: it has to look again by itself.
    await receiver!.waitFor(2, 8000)

    const replayed = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'unsure-2' })
    expect([replayed.status, replayed.body.idempotency_replayed, replayed.body.activeLoans.length]).toEqual([200, true, 2])
    expect((await api.post('/api/sandbox/loans', LOAN)).status).toBe(200)
    await receiver!.waitFor(3)
    await api.sandbox.deliveriesIdle()
    const types = receiver!.received.map(({ body }) => JSON.parse(body).data.object.id as string)
    expect(new Set(types).size).toBe(3)
    const listed = await api.get('/api/sandbox/webhooks')
    expect(listed.body.deliveries.map((delivery: { status: string }) => delivery.status)).toEqual(['delivered', 'delivered', 'delivered'])
  }, 20_000)

  it('has its deliveries resumed by the next start when the server stopped before storage answered', async () => {
    const { storage, state } = createUnsureStorage()
    const first = await startWithDelivery(storage)

    state.landThenFail = 1
    expect((await first.post('/api/sandbox/loans', LOAN)).status).toBe(500)
    await first.sandbox.close()

    // The key's first event was delivered, so only a marker written with the failed write tells
    // the next start that this key has one waiting.
    const second = await createTestApi({ storage, allowLocalWebhooks: true })
    apis.push(second)
    await receiver!.waitFor(2, 8000)
    await second.sandbox.deliveriesIdle()
    const listed = await second.get('/api/sandbox/webhooks', first.key)
    expect(listed.body.deliveries.map((delivery: { status: string }) => delivery.status)).toEqual(['delivered', 'delivered'])
  }, 20_000)
})
