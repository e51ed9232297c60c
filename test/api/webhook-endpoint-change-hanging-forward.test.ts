import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { MAX_IN_FLIGHT_PER_DESTINATION } from '../../src/webhooks/destination-gates.js'
import { createTestApi, newKey, type TestApi } from '../helpers/api.js'
import { startSilentServer, type SilentServer } from '../helpers/silent-server.js'

/** A receiver that answers 200 at once, except on /hold, where answers wait for `release`. */
async function startHoldingReceiver() {
  const held: ServerResponse[] = []
  const paths: string[] = []
  const server: Server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.url === '/hold') return void held.push(res)
      paths.push(req.url!)
      res.end('ok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    paths,
    release: () => held.splice(0).forEach((res) => res.end('ok')),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

async function waitUntil(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
}

let api: TestApi | undefined
let receiver: Awaited<ReturnType<typeof startHoldingReceiver>> | undefined
let silent: SilentServer | undefined
afterEach(async () => {
  receiver?.release()
  await silent?.close()
  await api?.sandbox.close()
  await receiver?.close()
  api = receiver = silent = undefined
})

/**
 * A key whose endpoint's test event waits for a place in flight (every place to the receiver's
 * host taken by other keys' deliveries, held unanswered) while its forward attempt hangs.
 */
async function queueBehindFullDestination() {
  receiver = await startHoldingReceiver()
  silent = await startSilentServer()
  // The default 10 s delivery timeout: the forward receiver holds each attempt that long.
  api = await createTestApi({ allowLocalWebhooks: true, webhookForwardTo: `${silent.url}/forward` })
  for (let i = 0; i < MAX_IN_FLIGHT_PER_DESTINATION; i++) {
    const key = newKey('blocker')
    await api.call('POST', '/api/sandbox/webhooks', { key, body: { url: `${receiver.base}/hold` } })
    await api.call('POST', '/api/sandbox/webhooks/test', { key, body: {} })
  }
  await waitUntil(() => receiver!.held.length === MAX_IN_FLIGHT_PER_DESTINATION)
  expect((await api.post('/api/sandbox/webhooks', { url: `${receiver.base}/mine` })).status).toBe(200)
  expect((await api.post('/api/sandbox/webhooks/test', {})).status).toBe(200)
  await new Promise((resolve) => setImmediate(resolve))
  return { api, receiver, silent }
}

describe('an endpoint changed while its delivery waits for a place in flight, the forward receiver hanging', () => {
  it('sends the delivery to the new URL without waiting for the forward receiver', async () => {
    const { api, receiver, silent } = await queueBehindFullDestination()
    // Moved while its send waits for a place: that send is withdrawn when it gets one.
    expect((await api.post('/api/sandbox/webhooks', { url: `${receiver.base}/moved` })).status).toBe(200)
    receiver.release()

    await waitUntil(() => receiver.paths.includes('/moved') || silent.dropped() > 0)
    // Delivered while every forward attempt is still held, not once they time out.
    expect(receiver.paths).toEqual(['/moved'])
    expect(silent.dropped()).toBe(0)
  }, 40_000)

  it('sends the delivery once the endpoint disabled at the moment of its send is enabled again, without waiting for the forward receiver', async () => {
    const { api, receiver, silent } = await queueBehindFullDestination()
    expect((await api.call('DELETE', '/api/sandbox/webhooks')).status).toBe(200)
    // The send gets its place with the endpoint disabled: withdrawn.
    receiver.release()
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(receiver.paths).toEqual([])
    expect((await api.post('/api/sandbox/webhooks', { url: `${receiver.base}/mine` })).status).toBe(200)

    await waitUntil(() => receiver.paths.includes('/mine') || silent.dropped() > 0)
    expect(receiver.paths).toEqual(['/mine'])
    expect(silent.dropped()).toBe(0)
  }, 40_000)
})
