import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, LOAN, type TestApi } from '../helpers/api.js'
import { findClosedPort, startReceiver, type TestReceiver } from '../helpers/receiver.js'

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

describe('the delivery log after serve started again with another --webhook-forward-to', () => {
  it('shows a waiting forward delivery with the URL it will be sent to', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-forward-url-'))
    const [before, after] = [await findClosedPort(), await findClosedPort()]
    const forwardUrl = (port: number) => `http://127.0.0.1:${port}/hook`
    try {
      api = await createTestApi({ storage: 'fs', dataDir, webhookForwardTo: forwardUrl(before) })
      const key = api.key
      expect((await api.post('/api/sandbox/loans', LOAN)).status).toBe(200)
      await api.sandbox.deliveriesIdle()
      await api.sandbox.close()
      api = await createTestApi({ storage: 'fs', dataDir, webhookForwardTo: forwardUrl(after) })
      // The default schedule's 5 s keeps the refused head waiting for the rest of this test.
      const log = (await api.get('/api/sandbox/webhooks', key)).body.deliveries as LoggedDelivery[]
      expect(log.length).toBeGreaterThan(0)
      expect(new Set(log.map((d) => d.url))).toEqual(new Set([forwardUrl(after)]))
    } finally {
      await api?.sandbox.close()
      api = undefined
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
