import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startWebhookListener } from '../../src/webhook-tools/webhook-listener.js'

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

/** A forward target that counts the connections it accepts, answering each request after `delayMs`. */
async function startCountingTarget(delayMs = 0): Promise<{ url: string; connections: () => number; requests: () => number }> {
  let connections = 0
  let requests = 0
  const server: Server = createServer((req, res) => {
    req.resume()
    req.on('end', () => setTimeout(() => {
      requests++
      res.end('ok')
    }, delayMs))
  })
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`, connections: () => connections, requests: () => requests }
}

async function startForwarder(forwardTo: string): Promise<string> {
  const listener = await startWebhookListener({ port: 0, forwardTo })
  closers.push(listener.close)
  return listener.url
}

const delivery = (n: number) => ({ method: 'POST', headers: { 'content-type': 'application/json', 'x-service-webhook-id': `evt_${n}` }, body: `{"id":"evt_${n}"}` })

describe('sandbox webhook listen --forward-to', () => {
  it('passes deliveries on over one kept-alive connection, not a new connection each', async () => {
    const target = await startCountingTarget()
    const url = await startForwarder(target.url)
    for (let n = 0; n < 20; n++) expect((await fetch(`${url}/webhooks`, delivery(n))).status).toBe(200)
    expect(target.requests()).toBe(20)
    expect(target.connections()).toBe(1)
  })

  it('still passes on every delivery that arrives at once, with no cap of its own on those in flight', async () => {
    // The server caps its sends per destination; the listener forwards what it gets as it gets it.
    const target = await startCountingTarget(100)
    const url = await startForwarder(target.url)
    const answers = await Promise.all(Array.from({ length: 40 }, (_, n) => fetch(`${url}/webhooks`, delivery(n))))
    expect(answers.map((answer) => answer.status)).toEqual(Array(40).fill(200))
    expect(target.connections()).toBe(40)
  })
})
