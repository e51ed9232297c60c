import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { computeSignature } from '../../src/webhooks/signature.js'
import { MAX_IN_FLIGHT_PER_DESTINATION } from '../../src/webhooks/destination-gates.js'
import { createTestApi, newKey, type TestApi } from '../helpers/api.js'

/** A receiver that answers 200 at once, except on /hold, where answers wait for `release`. */
async function startHoldingReceiver() {
  const held: ServerResponse[] = []
  const received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => { body += chunk.toString('utf8') })
    req.on('end', () => {
      if (req.url === '/hold') return void held.push(res)
      received.push({ path: req.url!, headers: req.headers, body })
      res.end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    base,
    held,
    received,
    release: () => held.splice(0).forEach((res) => res.end('ok')),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

async function waitUntil(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5))
}

let api: TestApi | undefined
let receiver: Awaited<ReturnType<typeof startHoldingReceiver>> | undefined
afterEach(async () => {
  receiver?.release()
  await api?.sandbox.close()
  await receiver?.close()
  api = receiver = undefined
})

/**
 * Every place in flight to the receiver's host is taken by other keys' deliveries, held
 * unanswered; the key's own test event then waits for a place with its endpoint as it was.
 */
async function queueBehindFullDestination() {
  receiver = await startHoldingReceiver()
  api = await createTestApi({ allowLocalWebhooks: true })
  for (let i = 0; i < MAX_IN_FLIGHT_PER_DESTINATION; i++) {
    const key = newKey('blocker')
    await api.call('POST', '/api/sandbox/webhooks', { key, body: { url: `${receiver.base}/hold` } })
    await api.call('POST', '/api/sandbox/webhooks/test', { key, body: {} })
  }
  await waitUntil(() => receiver!.held.length === MAX_IN_FLIGHT_PER_DESTINATION)
  const created = await api.post('/api/sandbox/webhooks', { url: `${receiver.base}/mine` })
  expect((await api.post('/api/sandbox/webhooks/test', {})).status).toBe(200)
  // The worker reaches the destination's queue in microtasks (memory storage, cached document).
  await new Promise((resolve) => setImmediate(resolve))
  return { api, receiver, oldSecret: created.body.endpoint.signingSecret as string }
}

describe('an endpoint changed while its delivery waits for a place in flight', () => {
  it('signs the delivery with the secret rotated in meanwhile, not the old one', async () => {
    const { api, receiver, oldSecret } = await queueBehindFullDestination()
    const rotated = await api.post('/api/sandbox/webhooks', { url: `${receiver.base}/mine`, rotate_secret: true })
    const newSecret = rotated.body.endpoint.signingSecret as string
    expect(newSecret).not.toBe(oldSecret)
    receiver.release()
    await waitUntil(() => receiver.received.length === 1)
    const [delivery] = receiver.received
    const timestamp = delivery!.headers['x-service-webhook-timestamp'] as string
    expect(delivery!.headers['x-service-webhook-signature']).toBe(`v1=${computeSignature(newSecret, timestamp, delivery!.body)}`)
  })

  it('does not send it once DELETE disabled the endpoint: it waits in the log, unattempted', async () => {
    const { api, receiver } = await queueBehindFullDestination()
    expect((await api.call('DELETE', '/api/sandbox/webhooks')).status).toBe(200)
    receiver.release()
    await api.sandbox.deliveriesIdle()
    expect(receiver.received).toEqual([])
    const log = await api.get('/api/sandbox/webhooks')
    expect(log.body.deliveries.map((d: { status: string; attempts: number }) => [d.status, d.attempts])).toEqual([['pending', 0]])
  })

  it('sends it to the URL registered meanwhile, not the old one', async () => {
    const { api, receiver } = await queueBehindFullDestination()
    await api.post('/api/sandbox/webhooks', { url: `${receiver.base}/moved` })
    receiver.release()
    await waitUntil(() => receiver.received.length === 1)
    await api.sandbox.deliveriesIdle()
    expect(receiver.received.map((delivery) => delivery.path)).toEqual(['/moved'])
    const log = await api.get('/api/sandbox/webhooks')
    expect(log.body.deliveries.map((d: { status: string; attempts: number }) => [d.status, d.attempts])).toEqual([['delivered', 1]])
  })
})
