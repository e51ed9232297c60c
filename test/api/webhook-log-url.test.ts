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

interface LoggedDelivery { url: string; status: string; attempts: number }

describe('the delivery log after POST /webhooks moved the endpoint to a new URL', () => {
  it('shows a waiting delivery with the URL it will be sent to, and a delivered one with the URL it went to', async () => {
    receiver = await startReceiver('/old')
    receiver.respond = () => (receiver!.received.length === 1 ? 200 : 500)
    api = await createTestApi({ allowLocalWebhooks: true })
    const oldUrl = receiver.url
    const newUrl = oldUrl.replace('/old', '/new')
    await api.post('/api/sandbox/webhooks', { url: oldUrl })
    await api.post('/api/sandbox/webhooks/test', {})
    await receiver.waitFor(1)
    await api.post('/api/sandbox/webhooks/test', {})
    await receiver.waitFor(2)
    await api.sandbox.deliveriesIdle()
    // The second event's first attempt failed; the next waits 5 s (the default schedule), long after this test.
    const moved = await api.post('/api/sandbox/webhooks', { url: newUrl })
    const shown = (body: { deliveries: LoggedDelivery[] }) => body.deliveries.map((d) => [d.status, d.attempts, d.url])
    expect(shown(moved.body)).toEqual([['retrying', 1, newUrl], ['delivered', 1, oldUrl]])
    expect(shown((await api.get('/api/sandbox/webhooks')).body)).toEqual([['retrying', 1, newUrl], ['delivered', 1, oldUrl]])
  })
})
