import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it } from 'vitest'
import type { DeliveryReport } from '../../src/webhooks/delivery-report.js'
import { createTestApi, type TestApi } from '../helpers/api.js'
import { findClosedPort } from '../helpers/receiver.js'

/** A memory storage that counts the writes of session documents, and keeps the last one past its close. */
function createCountingStorage() {
  const memory = memoryDriver()
  const counter = { sessionWrites: 0, lastSession: '' }
  const driver = defineDriver(() => ({
    ...memory,
    name: 'counting-memory',
    setItem(key: string, value: string) {
      if (key.startsWith('session:')) {
        counter.sessionWrites++
        counter.lastSession = value
      }
      return memory.setItem!(key, value, {})
    },
  }))
  return { storage: createStorage({ driver: driver(undefined) }), counter }
}

let api: TestApi | undefined
afterEach(async () => {
  await api?.sandbox.close()
  api = undefined
})

describe('a backlog draining towards a receiver that refuses connections', () => {
  it('writes the key document once per delivery that fails, not again for the next one\'s refused first attempt', async () => {
    const { storage, counter } = createCountingStorage()
    const port = await findClosedPort()
    const reports: DeliveryReport[] = []
    // One retry 2 s after the first attempt: longer than the 1 s within which staged records are written.
    api = await createTestApi({ storage, allowLocalWebhooks: true, webhookRetrySchedule: [2000], onDelivery: (report) => reports.push(report) })
    expect((await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await api.post('/api/sandbox/loans', { collateral_btc: 0.05, loan_amount: 1000 })).status).toBe(200)
    const written = counter.sessionWrites

    const failed = () => reports.filter((report) => report.status === 'failed')
    const deadline = Date.now() + 15_000
    while (failed().length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(failed()).toHaveLength(2)
    // The delivery moved up behind the second failure is tried a moment after it (later on a busy host).
    const readLog = async () => ((await api!.get('/api/sandbox/webhooks')).body.deliveries as Array<{ status: string; attempts: number }>)
      .map((delivery) => [delivery.status, delivery.attempts])
    let log = await readLog()
    while (log[0]?.[0] === 'pending' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      log = await readLog()
    }
    expect(log).toEqual([['retrying', 1], ['failed', 2], ['failed', 2]])
    // Each failure is written at once; the refused first attempt of the delivery moved up behind it
    // is counted in memory (shown in the log) and written with the next failure, not on its own.
    expect(counter.sessionWrites - written).toBe(2)

    // A clean stop writes what memory holds (and then disposes of the storage).
    await api.sandbox.close()
    api = undefined
    const stored = JSON.parse(counter.lastSession).webhook.deliveries as Array<{ status: string; attempts: number }>
    expect(stored.map((delivery) => [delivery.status, delivery.attempts])).toEqual([['failed', 2], ['failed', 2], ['retrying', 1]])
  }, 30_000)
})
