import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi } from '../helpers/api.js'
import { startReceiver } from '../helpers/receiver.js'

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

describe('a delivery that failed for good', () => {
  it('does not hold back the events after it, and is not sent again on its own', async () => {
    const receiver = await startReceiver()
    stops.push(() => receiver.close())
    receiver.respond = () => 503
    const api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [1] })
    stops.push(() => api.sandbox.close())
    await api.post('/api/sandbox/webhooks', { url: receiver.url })
    const first = (await api.post('/api/sandbox/webhooks/test')).body.delivery.id
    await receiver.waitFor(2)
    await api.sandbox.deliveriesIdle()

    receiver.respond = () => 204
    const second = (await api.post('/api/sandbox/webhooks/test')).body.delivery.id
    await receiver.waitFor(3)
    await api.sandbox.deliveriesIdle()
    const log = (await api.get('/api/sandbox/webhooks')).body.deliveries as Array<{ id: string; status: string; attempts: number }>
    expect(log.map(({ id, status, attempts }) => [id, status, attempts])).toEqual([[second, 'delivered', 1], [first, 'failed', 2]])
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(receiver.received).toHaveLength(3)
  })
})
