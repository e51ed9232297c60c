import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

let api: TestApi | undefined
let receiver: TestReceiver | undefined
afterEach(async () => {
  await api?.sandbox.close()
  await receiver?.close()
  api = receiver = undefined
})

interface LoggedDelivery { id: string; status: string; attempts: number; next_attempt_at: string | null }

describe('the delivery log\'s next_attempt_at of a delivery queued behind a retrying one', () => {
  it('is the retrying one\'s next attempt, not a time gone by, when queued and after the retry endpoint put it back', async () => {
    receiver = await startReceiver('/hook')
    receiver.respond = () => 500
    api = await createTestApi({ allowLocalWebhooks: true })
    await api.post('/api/sandbox/webhooks', { url: receiver.url })
    await api.post('/api/sandbox/webhooks/test', {})
    await receiver.waitFor(1)
    await api.sandbox.deliveriesIdle()
    // The first event's retry waits 5 s (the default schedule), long after this test.
    const queued = await api.post('/api/sandbox/webhooks/test', {})
    const read = async () => (await api!.get('/api/sandbox/webhooks')).body.deliveries as LoggedDelivery[]
    const [second, first] = await read()
    expect([first!.status, first!.attempts, second!.status, second!.attempts]).toEqual(['retrying', 1, 'pending', 0])
    expect(Date.parse(first!.next_attempt_at!)).toBeGreaterThan(Date.now())
    expect(second!.next_attempt_at).toBe(first!.next_attempt_at)
    expect((queued.body.delivery as LoggedDelivery).next_attempt_at).toBe(first!.next_attempt_at)

    const retried = await api.post('/api/sandbox/webhooks/retry', { delivery_id: second!.id })
    expect(retried.status).toBe(200)
    for (const log of [retried.body.deliveries as LoggedDelivery[], await read()]) {
      expect(log.map((delivery) => [delivery.id, delivery.status, delivery.next_attempt_at])).toEqual([
        [second!.id, 'pending', first!.next_attempt_at],
        [first!.id, 'retrying', first!.next_attempt_at],
      ])
    }
    expect(receiver.received).toHaveLength(1)
  })
})
