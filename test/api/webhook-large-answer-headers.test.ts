import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { verifyReceiver } from '../../src/webhook-tools/verify-receiver.js'
import { startWebhookListener } from '../../src/webhook-tools/webhook-listener.js'
import { createTestApi, type TestApi } from '../helpers/api.js'

// Receivers behind frameworks answer with large headers (session cookies, a long
// Content-Security-Policy); Node's client reads at most 16 KB of them by default.
const SECRET = 'whsec_large_answer_headers_test'

let api: TestApi | undefined
const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  await api?.sandbox.close()
  api = undefined
  for (const close of closers.splice(0)) await close()
})

/**
 * A receiver on 127.0.0.1 whose every answer carries `headerBytes` of Set-Cookie; it answers 200,
 * or, with `checkSignature`, 200 only to a delivery signed with SECRET and 400 to any other.
 */
async function startLargeHeaderReceiver(headerBytes: number, checkSignature = false): Promise<{ url: string; received: number }> {
  const state = { url: '', received: 0 }
  const seen = new Set<string>()
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      state.received++
      let status = 200
      if (checkSignature) {
        try {
          const { eventId } = verifyWebhook({ secret: SECRET, body: Buffer.concat(chunks).toString('utf8'), headers: req.headers as Record<string, string> })
          seen.add(eventId)
        } catch {
          status = 400
        }
      }
      // Cookies of 4 KB each, as browsers cap one, to make up the size.
      const cookies = Array.from({ length: Math.ceil(headerBytes / 4096) }, (_, n) => `c${n}=${'x'.repeat(4090)}`)
      res.writeHead(status, { 'content-type': 'application/json', 'set-cookie': cookies }).end('{"ok":true}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`
  return state
}

async function sendTestEvent(url: string) {
  api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [60_000] })
  expect((await api.post('/api/sandbox/webhooks', { url })).status).toBe(200)
  expect((await api.post('/api/sandbox/webhooks/test')).status).toBe(200)
  await expect.poll(async () => (await api!.get('/api/sandbox/webhooks')).body.deliveries[0].attempts, { timeout: 15_000 }).toBe(1)
  return (await api.get('/api/sandbox/webhooks')).body.deliveries[0]
}

describe('a receiver answering with large headers', () => {
  it('a 200 with 64 KB of headers is a delivery, not a failure to retry', async () => {
    const receiver = await startLargeHeaderReceiver(64 * 1024)
    const delivery = await sendTestEvent(receiver.url)
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200, last_error: null })
    expect(receiver.received).toBe(1)
  })

  it('a 200 with headers over 1 MiB fails with a last_error that says so', async () => {
    const receiver = await startLargeHeaderReceiver(1100 * 1024)
    const delivery = await sendTestEvent(receiver.url)
    expect(delivery).toMatchObject({ status: 'retrying', attempts: 1, last_status_code: null })
    expect(delivery.last_error).toBe('HPE_HEADER_OVERFLOW: the receiver\'s answer headers are over 1 MiB, the most the sandbox reads')
  })

  it('webhook verify judges a receiver whose answers carry 64 KB of headers, and passes a correct one', async () => {
    const receiver = await startLargeHeaderReceiver(64 * 1024, true)
    const report = await verifyReceiver({ url: receiver.url, secret: SECRET })
    expect(report.cases.filter((result) => !result.ok)).toEqual([])
  })

  it('webhook verify names headers over 1 MiB in each case, not a server that does not speak HTTP', async () => {
    const receiver = await startLargeHeaderReceiver(1100 * 1024, true)
    const report = await verifyReceiver({ url: receiver.url, secret: SECRET })
    expect(new Set(report.cases.map((result) => result.error))).toEqual(new Set(['HPE_HEADER_OVERFLOW: the receiver\'s answer headers are over 1 MiB, the most the sandbox reads']))
  })

  it('webhook listen --forward-to answers the receiver\'s 200 when it comes with 64 KB of headers', async () => {
    const receiver = await startLargeHeaderReceiver(64 * 1024)
    const listener = await startWebhookListener({ port: 0, forwardTo: receiver.url })
    closers.push(() => listener.close())
    const answer = await fetch(`${listener.url}/webhooks`, { method: 'POST', body: '{}' })
    expect(answer.status).toBe(200)
    expect(receiver.received).toBe(1)
  })
})
