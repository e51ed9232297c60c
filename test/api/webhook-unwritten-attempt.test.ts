import { createStorage, defineDriver, type Storage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it } from 'vitest'
import type { DeliveryReport } from '../../src/webhooks/delivery-report.js'
import { createTestApi, LOAN, type TestApi } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

/** A memory driver whose writes can be made to fail, like a full disk. */
function createFullDiskStorage() {
  const memory = memoryDriver()
  const state = { full: false }
  const driver = defineDriver(() => ({
    ...memory,
    name: 'full-disk-memory',
    setItem(key: string, value: string) {
      if (state.full) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
      return memory.setItem!(key, value, {})
    },
  }))
  return { storage: createStorage({ driver: driver(undefined) }), state }
}

/** The deliveries of the one session document as storage holds it, not as the server has it in memory. */
async function readStoredDeliveries(storage: Storage): Promise<Array<{ status: string; attempts: number }>> {
  const [docKey] = await storage.getKeys('session')
  return JSON.parse(await storage.getItemRaw<string>(docKey!) as string).webhook.deliveries
}

/** Waits (a 5 s hang bound) until every stored delivery is delivered; the caller's expect says whether it came. */
async function waitUntilStoredDelivered(storage: Storage): Promise<void> {
  const deadline = Date.now() + 5000
  while ((await readStoredDeliveries(storage)).some((delivery) => delivery.status !== 'delivered') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
}

let api: TestApi | undefined
let receiver: TestReceiver | undefined
afterEach(async () => {
  await api?.sandbox.close()
  api = undefined
  await receiver?.close()
  receiver = undefined
})

describe('an attempt the receiver accepted whose record cannot be written', () => {
  it('is not sent again while storage fails, is reported once, and is written once storage takes writes', async () => {
    const { storage, state } = createFullDiskStorage()
    receiver = await startReceiver('/ok')
    // The disk fills while the second event is on its way: the loan was stored, its record will not be.
    receiver.respond = () => {
      if (receiver!.received.length === 2) state.full = true
      return 200
    }
    const reports: DeliveryReport[] = []
    api = await createTestApi({ storage, allowLocalWebhooks: true, onDelivery: (report) => reports.push(report) })
    expect((await api.post('/api/sandbox/webhooks', { url: receiver.url })).status).toBe(200)
    expect((await api.post('/api/sandbox/loans', LOAN)).status).toBe(200)
    await receiver.waitFor(1)
    await api.sandbox.deliveriesIdle()
    expect((await api.post('/api/sandbox/loans', LOAN)).status).toBe(200)
    await receiver.waitFor(2)

    // Two of the worker's retries (every 2 s) go by: it tries to write the record, not to send again.
    await new Promise((resolve) => setTimeout(resolve, 4500))
    expect(receiver.received).toHaveLength(2)
    const second = JSON.parse(receiver.received[1]!.body).id as string
    expect(reports.filter((report) => report.event_id === second).map((report) => [report.status, report.attempt])).toEqual([['delivered', 1]])
    const shown = (await api.get('/api/sandbox/webhooks')).body.deliveries
    expect(shown.map((delivery: { status: string; attempts: number }) => [delivery.status, delivery.attempts])).toEqual([['delivered', 1], ['delivered', 1]])

    state.full = false
    await waitUntilStoredDelivered(storage)
    expect((await readStoredDeliveries(storage)).map((delivery) => [delivery.status, delivery.attempts])).toEqual([['delivered', 1], ['delivered', 1]])
    expect(receiver.received).toHaveLength(2)
  }, 20_000)

  it('is not sent again when the record of a failed attempt before it was still waiting to be written', async () => {
    const { storage, state } = createFullDiskStorage()
    receiver = await startReceiver('/ok')
    // The first attempt fails (its record waits up to 1 s to be written), then storage stops taking
    // writes at once, as when redis goes away: the retry that succeeds cannot be recorded either.
    receiver.respond = () => {
      if (receiver!.received.length > 1) return 200
      state.full = true
      return 500
    }
    api = await createTestApi({ storage, allowLocalWebhooks: true, webhookRetrySchedule: [200, 200] })
    expect((await api.post('/api/sandbox/webhooks', { url: receiver.url })).status).toBe(200)
    expect((await api.post('/api/sandbox/loans', LOAN)).status).toBe(200)
    await receiver.waitFor(2)
    await new Promise((resolve) => setTimeout(resolve, 1500))

    state.full = false
    await waitUntilStoredDelivered(storage)
    await api.sandbox.deliveriesIdle()
    expect((await readStoredDeliveries(storage)).map((delivery) => delivery.status)).toEqual(['delivered'])
    // Twice: the failed attempt and the one the receiver accepted, not a third time once storage took writes.
    expect(receiver.received).toHaveLength(2)
  }, 20_000)

  it('makes close reject, naming the attempt records it could not write, when storage still refuses them', async () => {
    const { storage, state } = createFullDiskStorage()
    receiver = await startReceiver('/ok')
    // Storage stops taking writes as the first attempt fails: its record, staged for up to 1 s, is never written.
    receiver.respond = () => {
      state.full = true
      return 500
    }
    const closing = await createTestApi({ storage, allowLocalWebhooks: true, webhookRetrySchedule: [60_000] })
    expect((await closing.post('/api/sandbox/webhooks', { url: receiver.url })).status).toBe(200)
    expect((await closing.post('/api/sandbox/loans', LOAN)).status).toBe(200)
    await receiver.waitFor(1)
    await closing.sandbox.deliveriesIdle()
    await expect(closing.sandbox.close()).rejects.toThrow(/^stopped without storage's last writes \(.*ENOSPC.*\): the record of webhook attempts of 1 key, which run again after a restart/)
  }, 20_000)
})
