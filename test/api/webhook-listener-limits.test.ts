import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { LISTENER_BODY_LIMIT_BYTES, startWebhookListener, type ReceivedWebhook } from '../../src/webhook-tools/webhook-listener.js'

let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
})

async function startListener(received: ReceivedWebhook[], timeouts?: { headersMs: number; requestMs: number; checkIntervalMs: number }): Promise<string> {
  const listener = await startWebhookListener({ port: 0, onDelivery: (delivery) => received.push(delivery), timeouts })
  close = listener.close
  return listener.url
}

describe('sandbox webhook listen, against misbehaving clients', () => {
  it('cuts a client trickling its headers, and still takes deliveries', async () => {
    const received: ReceivedWebhook[] = []
    // Short limits, so a cut shows within the test's window; Node's own would wait 60 s or more.
    const url = await startListener(received, { headersMs: 300, requestMs: 600, checkIntervalMs: 50 })
    const socket = connect({ port: Number(new URL(url).port), host: '127.0.0.1' })
    let answer = ''
    socket.on('data', (chunk: Buffer) => { answer += chunk.toString('latin1') })
    socket.on('error', () => {})
    const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)))
    socket.write('POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    const trickle = setInterval(() => socket.writable && socket.write('X-Trickle: 1\r\n'), 50)
    const cut = await Promise.race([closed, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 4000))])
    clearInterval(trickle)
    socket.destroy()
    expect(cut).toBe(true)
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    const response = await fetch(`${url}/webhooks`, { method: 'POST', body: '{"id":"evt_1","type":"sandbox.webhook.test"}' })
    expect(response.status).toBe(200)
    expect(received.map((delivery) => delivery.body)).toEqual(['{"id":"evt_1","type":"sandbox.webhook.test"}'])
  })

  it('neither reports nor forwards a delivery whose body never arrived whole (cut with 408, or the client hung up)', async () => {
    const forwarded: ReceivedWebhook[] = []
    const target = await startWebhookListener({ port: 0, onDelivery: (delivery) => forwarded.push(delivery) })
    const received: ReceivedWebhook[] = []
    const listener = await startWebhookListener({ port: 0, forwardTo: `${target.url}/in`, onDelivery: (delivery) => received.push(delivery), timeouts: { headersMs: 300, requestMs: 600, checkIntervalMs: 50 } })
    close = async () => {
      await listener.close()
      await target.close()
    }
    const port = Number(new URL(listener.url).port)
    const answers: string[] = []
    for (const hangUp of [false, true]) {
      const socket = connect({ port, host: '127.0.0.1' })
      let answer = ''
      socket.on('data', (chunk: Buffer) => { answer += chunk.toString('latin1') })
      socket.on('error', () => {})
      socket.write('POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 60\r\n'
        + 'x-service-webhook-id: evt_cut\r\nx-service-webhook-event: loan.created\r\n\r\n{"id":"evt_cut"')
      if (hangUp) setTimeout(() => socket.destroy(), 100)
      await new Promise((resolve) => socket.once('close', resolve))
      answers.push(answer.split('\r\n')[0]!)
    }
    expect(answers).toEqual(['HTTP/1.1 408 Request Timeout', ''])
    // A whole delivery after them is reported and forwarded: the listener had time to act on the cut ones.
    const response = await fetch(`${listener.url}/webhooks`, { method: 'POST', body: '{"id":"evt_2","type":"loan.created"}' })
    expect(response.status).toBe(200)
    expect(received.map((delivery) => delivery.body)).toEqual(['{"id":"evt_2","type":"loan.created"}'])
    expect(forwarded.map((delivery) => delivery.body)).toEqual(['{"id":"evt_2","type":"loan.created"}'])
  })

  it('answers 413 to a body over its limit without keeping it or reporting a delivery', async () => {
    const received: ReceivedWebhook[] = []
    const url = await startListener(received)
    const response = await fetch(`${url}/webhooks`, { method: 'POST', body: Buffer.alloc(LISTENER_BODY_LIMIT_BYTES + 1, 0x20) })
    expect(response.status).toBe(413)
    expect(await response.json()).toEqual({ received: false, error: `body over ${LISTENER_BODY_LIMIT_BYTES} bytes` })
    expect(received).toEqual([])
    // A body of exactly the limit is still a delivery.
    const atLimit = await fetch(`${url}/webhooks`, { method: 'POST', body: Buffer.alloc(LISTENER_BODY_LIMIT_BYTES, 0x20) })
    expect(atLimit.status).toBe(200)
    expect(received).toHaveLength(1)
  })
})
