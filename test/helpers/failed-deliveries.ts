import { expect } from 'vitest'
import { createTestApi, type TestApi } from './api.js'
import { startReceiver, type TestReceiver } from './receiver.js'

/**
 * A key whose endpoint (a receiver answering 503, one retry after 1 ms) got `count` test events,
 * all failed by now, with their delivery and event ids in order. What it starts is added to `stops`.
 */
export async function setupFailedDeliveries(count: number, stops: Array<() => Promise<void>>): Promise<{ api: TestApi; receiver: TestReceiver; ids: string[]; events: string[] }> {
  const receiver = await startReceiver()
  stops.push(() => receiver.close())
  receiver.respond = () => 503
  const api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [1] })
  stops.push(() => api.sandbox.close())
  await api.post('/api/sandbox/webhooks', { url: receiver.url })
  const ids: string[] = []
  const events: string[] = []
  for (let sent = 0; sent < count; sent++) {
    const { body } = await api.post('/api/sandbox/webhooks/test')
    ids.push(body.delivery.id)
    events.push(body.event.id)
  }
  await receiver.waitFor(count * 2, 30_000)
  await api.sandbox.deliveriesIdle()
  const shown = (await api.get('/api/sandbox/webhooks')).body.deliveries as Array<{ status: string }>
  expect(new Set(shown.map((delivery) => delivery.status))).toEqual(new Set(['failed']))
  return { api, receiver, ids, events }
}
