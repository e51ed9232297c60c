import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startWebhookListener } from '../../src/webhook-tools/webhook-listener.js'
import { computeSignature, signWebhook } from '../../src/webhooks/signature.js'

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

/**
 * A forward target that counts the connections it accepts. It answers each request after
 * `delayMs`, or, with `holdUntil`, once that many requests are in (or 5 s after the first), so
 * that none ends before the last has arrived however slow the machine.
 */
async function startCountingTarget(options: { delayMs?: number; holdUntil?: number } = {}): Promise<{ url: string; connections: () => number; requests: () => number }> {
  let connections = 0
  let requests = 0
  const held: Array<() => void> = []
  let giveUp: NodeJS.Timeout | undefined
  const release = () => {
    clearTimeout(giveUp)
    for (const answer of held.splice(0)) answer()
  }
  const server: Server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const answer = () => {
        requests++
        res.end('ok')
      }
      if (options.holdUntil === undefined) return void setTimeout(answer, options.delayMs ?? 0)
      held.push(answer)
      giveUp ??= setTimeout(release, 5000)
      if (held.length >= options.holdUntil) release()
    })
  })
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(() => new Promise((resolve) => {
    release()
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

  it('checks and passes on the body bytes as received, bytes that are not UTF-8 included', async () => {
    // A hand-made delivery from a partner's own test sender, in Windows-1252: "é" is the one byte 0xe9.
    const body = Buffer.concat([Buffer.from('{"id":"evt_1252","type":"sandbox.partner.updated","name":"'), Buffer.from([0xe9]), Buffer.from('"}')])
    const secret = 'whsec_listener_bytes_secret'
    const { headers } = signWebhook({ secret, body: 'unused', eventId: 'evt_1252', eventType: 'sandbox.partner.updated' })
    headers['x-service-webhook-signature'] = `v1=${computeSignature(secret, headers['x-service-webhook-timestamp']!, body)}`
    let forwarded: Buffer | undefined
    const target = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        forwarded = Buffer.concat(chunks)
        res.end('ok')
      })
    })
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
    closers.push(() => new Promise((resolve) => target.close(() => resolve())))
    const seen: string[] = []
    const listener = await startWebhookListener({ port: 0, secret, forwardTo: `http://127.0.0.1:${(target.address() as AddressInfo).port}/in`, onDelivery: (delivery) => seen.push(delivery.signature) })
    closers.push(listener.close)
    expect((await fetch(`${listener.url}/webhooks`, { method: 'POST', headers, body })).status).toBe(200)
    expect(forwarded).toEqual(body)
    expect(seen).toEqual(['valid'])
  })

  it('still passes on every delivery that arrives at once, with no cap of its own on those in flight', async () => {
    // The server caps its sends per destination; the listener forwards what it gets as it gets it.
    const target = await startCountingTarget({ holdUntil: 40 })
    const url = await startForwarder(target.url)
    const answers = await Promise.all(Array.from({ length: 40 }, (_, n) => fetch(`${url}/webhooks`, delivery(n))))
    expect(answers.map((answer) => answer.status)).toEqual(Array(40).fill(200))
    expect(target.connections()).toBe(40)
  })
})
