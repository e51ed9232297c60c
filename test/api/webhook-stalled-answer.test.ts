import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

/** A receiver that answers 200 at once, then never finishes its answer's body. */
async function startStallingReceiver(): Promise<{ url: string; posts: () => number }> {
  let posts = 0
  const open: ServerResponse[] = []
  const server = createServer((req, res) => {
    posts++
    req.resume()
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('ok, processing')
    open.push(res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  stops.push(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, posts: () => posts }
}

describe('a receiver that answers 2xx, then does not finish its answer within the timeout', () => {
  it('has the delivery delivered with its status, and gets it once', async () => {
    const receiver = await startStallingReceiver()
    const api: TestApi = await createTestApi({ allowLocalWebhooks: true, webhookTimeoutMs: 200, webhookRetrySchedule: [50, 50] })
    stops.push(() => api.sandbox.close())
    await api.post('/api/sandbox/webhooks', { url: receiver.url })
    const { body } = await api.post('/api/sandbox/webhooks/test')
    const deadline = Date.now() + 5000
    let shown: { status: string; last_status_code: number | null; last_error: string | null; attempts: number } | undefined
    while (Date.now() < deadline) {
      shown = (await api.get('/api/sandbox/webhooks')).body.deliveries.find((item: { id: string }) => item.id === body.delivery.id)
      if (shown && shown.status !== 'pending') break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await api.sandbox.deliveriesIdle()
    // Time for a retry, had there been one: the schedule's steps are 50 ms.
    await new Promise((resolve) => setTimeout(resolve, 300))
    shown = (await api.get('/api/sandbox/webhooks')).body.deliveries.find((item: { id: string }) => item.id === body.delivery.id)
    expect(shown).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200, last_error: null })
    expect(receiver.posts()).toBe(1)
  })
})
