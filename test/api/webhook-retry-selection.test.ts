import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi } from '../helpers/api.js'
import { setupFailedDeliveries } from '../helpers/failed-deliveries.js'

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

const setupFailed = (count: number) => setupFailedDeliveries(count, stops)

describe('POST /api/sandbox/webhooks/retry chooses', () => {
  it('the 50 oldest failed deliveries when the body names none, as the README says', async () => {
    const { api, ids } = await setupFailed(51)
    const retried = await api.post('/api/sandbox/webhooks/retry', {})
    expect(retried.status).toBe(200)
    expect(retried.body.retried).toEqual(ids.slice(0, 50))
  })

  it('delivery_id together with the delivery_ids when both are sent', async () => {
    const { api, receiver, ids } = await setupFailed(3)
    receiver.respond = () => 204
    const retried = await api.post('/api/sandbox/webhooks/retry', { delivery_id: ids[0], delivery_ids: [ids[2]] })
    expect(retried.status).toBe(200)
    expect(retried.body.retried).toEqual([ids[0], ids[2]])
    await receiver.waitFor(8)
    await api.sandbox.deliveriesIdle()
    const log = (await api.get('/api/sandbox/webhooks')).body.deliveries as Array<{ id: string; status: string }>
    expect(Object.fromEntries(log.map((delivery) => [delivery.id, delivery.status]))).toEqual({ [ids[0]!]: 'delivered', [ids[1]!]: 'failed', [ids[2]!]: 'delivered' })
  })
})

describe('a delivery that failed for good', () => {
  it('does not hold back the events after it, and is not sent again on its own', async () => {
    const { api, receiver, ids: [first] } = await setupFailed(1)
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

describe('POST /api/sandbox/webhooks on an existing endpoint', () => {
  const resolveHost = async () => ['93.184.216.34']

  it('keeps createdAt, moves updatedAt, and lists an event named twice once', async () => {
    const api = await createTestApi({ resolveHost })
    stops.push(() => api.sandbox.close())
    const created = (await api.post('/api/sandbox/webhooks', { url: 'https://hooks.partner.example/a' })).body.endpoint
    await new Promise((resolve) => setTimeout(resolve, 5))
    const updated = await api.post('/api/sandbox/webhooks', { url: 'https://hooks.partner.example/b', events: ['sandbox.loan.issued', 'sandbox.partner.updated', 'sandbox.loan.issued'] })
    expect(updated.status).toBe(200)
    expect(updated.body.endpoint).toMatchObject({ id: created.id, createdAt: created.createdAt, events: ['sandbox.loan.issued', 'sandbox.partner.updated'] })
    expect(Date.parse(updated.body.endpoint.updatedAt)).toBeGreaterThan(Date.parse(created.createdAt))
  })
})
