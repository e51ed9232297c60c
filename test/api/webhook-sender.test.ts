import { createServer } from 'node:http'
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createConnectionPool } from '../../src/webhooks/connection-pool.js'
import { MAX_ANSWER_BYTES, probeConnection, sendWebhook } from '../../src/webhooks/sender.js'
import { startReceiver as startTestReceiver, type TestReceiver } from '../helpers/receiver.js'

// The sender alone, with hand-made bodies and headers: no event the OpenAPI document describes.
const startReceiver = () => startTestReceiver('/webhooks', 0, { checkDeliveries: false })

let receiver: TestReceiver | undefined
afterEach(async () => {
  await receiver?.close()
  receiver = undefined
})

/** A resolver that counts calls and answers after a delay, failing while `failing` is set. */
function slowResolver(state: { calls: number; failing: boolean }) {
  return async (host: string) => {
    state.calls++
    await new Promise((resolve) => setTimeout(resolve, 30))
    if (state.failing) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
    return ['127.0.0.1']
  }
}

describe('sending one webhook', () => {
  it('sends exactly the body, with headers made when the connection is up', async () => {
    receiver = await startReceiver()
    let built = 0
    const outcome = await sendWebhook(receiver.url, '{"id":"evt_1"}', () => ({ 'x-built': String(++built) }))
    expect(outcome).toMatchObject({ statusCode: 200, error: null })
    expect(built).toBe(1)
    expect(receiver.received[0]).toMatchObject({ body: '{"id":"evt_1"}', headers: { 'x-built': '1', 'content-type': 'application/json' } })
  })

  it('without a pool (webhook verify, listen --forward-to): one connection per send, the one it opened', async () => {
    let connections = 0
    const server = createServer((req, res) => {
      req.resume()
      req.on('end', () => res.end('ok'))
    })
    server.on('connection', () => connections++)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`
      for (let n = 0; n < 3; n++) expect(await sendWebhook(url, '{}', {})).toMatchObject({ statusCode: 200, error: null })
      expect(connections).toBe(3)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('withdrawn by its headers function (the target changed meanwhile): sends nothing, and closes the connection it opened', async () => {
    let opened = 0
    let closed = 0
    let bytes = 0
    const sockets = new Set<Socket>()
    const server = createNetServer((socket) => {
      opened++
      sockets.add(socket)
      socket.on('data', (chunk) => { bytes += chunk.length })
      socket.on('close', () => { closed++ })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const outcome = await sendWebhook(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, '{}', () => undefined)
      expect(outcome).toEqual({ statusCode: null, error: 'not sent: its target changed meanwhile', durationMs: 0, notSent: true })
      // Left open, the connection would sit on the receiver with nothing sent on it.
      await expect.poll(() => closed).toBe(1)
      expect(opened).toBe(1)
      expect(bytes).toBe(0)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('reads at most 64 KB of an answer and does not reuse that connection', async () => {
    let connections = 0
    let written = 0
    const server = createServer((req, res) => {
      req.resume()
      res.writeHead(200, { 'content-type': 'text/plain' })
      // An answer that would take far longer than the timeout to finish.
      const chunk = Buffer.alloc(16 * 1024, 'x')
      const timer = setInterval(() => {
        if (res.writableLength > 0) return
        res.write(chunk)
        written += chunk.length
      }, 1)
      res.on('close', () => clearInterval(timer))
    })
    server.on('connection', () => connections++)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
    const pool = createConnectionPool()
    try {
      // A sender that read on would have been cut by the timeout: `timed out after 5000 ms`, no status.
      const outcome = await sendWebhook(url, '{}', {}, { pool, timeoutMs: 5000 })
      expect(outcome).toMatchObject({ statusCode: 200, error: null })
      expect(written).toBeGreaterThan(MAX_ANSWER_BYTES)
      expect((await sendWebhook(url, '{}', {}, { pool, timeoutMs: 5000 })).statusCode).toBe(200)
      expect(connections).toBe(2)
    } finally {
      pool.close()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('words an https:// URL answered in plain HTTP on one line, without OpenSSL\'s trace (the delivery log shows it as last_error)', async () => {
    receiver = await startReceiver()
    const outcome = await sendWebhook(receiver.url.replace(/^http:/, 'https:'), '{}', {})
    expect(outcome).toMatchObject({ statusCode: null, error: 'ERR_SSL_WRONG_VERSION_NUMBER: the receiver answers plain HTTP, not TLS' })
  })

  it('times out the whole attempt', async () => {
    receiver = await startReceiver()
    receiver.delayMs = 500
    const outcome = await sendWebhook(receiver.url, '{}', {}, { timeoutMs: 50 })
    expect(outcome).toMatchObject({ statusCode: null, error: 'timed out after 50 ms' })
  })

  it('shares a failure to connect with the sends that waited for the same destination', async () => {
    receiver = await startReceiver()
    const url = receiver.url.replace('127.0.0.1', 'receiver.partner.test')
    const state = { calls: 0, failing: true }
    const pool = createConnectionPool()
    const options = { isForbidden: () => false, resolve: slowResolver(state), pool }
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => sendWebhook(url, '{}', {}, options)))
    expect(state.calls).toBe(1)
    expect(outcomes.map((outcome) => outcome.error)).toEqual(Array(5).fill('ENOTFOUND: getaddrinfo ENOTFOUND receiver.partner.test'))
    expect(pool.opening.size).toBe(0)

    // Once that attempt is over, the next send tries for itself.
    state.failing = false
    expect(await sendWebhook(url, '{}', {}, options)).toMatchObject({ statusCode: 200, error: null })
    expect(state.calls).toBe(2)
    pool.close()
  })

  it('counts the timeout from the start of the attempt, time spent waiting for a shared connection included', async () => {
    receiver = await startReceiver()
    receiver.delayMs = 3000
    const url = receiver.url.replace('127.0.0.1', 'receiver.partner.test')
    const slow = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      return ['127.0.0.1']
    }
    const pool = createConnectionPool()
    const options = { isForbidden: () => false, resolve: slow, pool, timeoutMs: 1200 }
    // The second send waits 1 s for the first one's connection, then needs 1 s for its own: it
    // times out at 1.2 s, or at 2.2 s when the wait is not counted. Timers on a busy 2-core
    // machine fired up to ~190 ms late, too close to the 120 ms margin this had at 150/250 ms.
    const [, waiter] = await Promise.all([sendWebhook(url, '{}', {}, options), sendWebhook(url, '{}', {}, options)])
    expect(waiter.error).toBe('timed out after 1200 ms')
    expect(waiter.durationMs).toBeLessThan(1700)
    pool.close()
  })

  it('opens a connection per send when they are not told to share, and never shares a success', async () => {
    receiver = await startReceiver()
    const url = receiver.url.replace('127.0.0.1', 'receiver.partner.test')
    const state = { calls: 0, failing: true }
    const apart = await Promise.all(Array.from({ length: 3 }, () => sendWebhook(url, '{}', {}, { isForbidden: () => false, resolve: slowResolver(state) })))
    expect(state.calls).toBe(3)
    expect(apart.every((outcome) => outcome.error?.startsWith('ENOTFOUND'))).toBe(true)

    state.failing = false
    const pool = createConnectionPool()
    const shared = await Promise.all(Array.from({ length: 3 }, (_, i) => sendWebhook(url, `{"n":${i}}`, {}, { isForbidden: () => false, resolve: slowResolver(state), pool })))
    expect(shared.map((outcome) => outcome.statusCode)).toEqual([200, 200, 200])
    expect(receiver.received.map((item) => item.body).sort()).toEqual(['{"n":0}', '{"n":1}', '{"n":2}'])
    pool.close()
  })

  it('keeps a connection alive for the next send to the same destination', async () => {
    receiver = await startReceiver()
    const url = receiver.url.replace('127.0.0.1', 'receiver.partner.test')
    const state = { calls: 0, failing: false }
    const pool = createConnectionPool()
    for (const n of [1, 2, 3]) {
      expect(await sendWebhook(url, `{"n":${n}}`, {}, { isForbidden: () => false, resolve: slowResolver(state), pool })).toMatchObject({ statusCode: 200 })
    }
    // Looked up (and checked) once: the later sends went over the same connection.
    expect(state.calls).toBe(1)
    expect(receiver.received).toHaveLength(3)
    pool.close()
  })

  it('sends again on a new connection when the receiver closed the kept one', async () => {
    const seen: number[] = []
    const server = createServer((req, res) => {
      const socket = req.socket as typeof req.socket & { served?: number }
      socket.served = (socket.served ?? 0) + 1
      seen.push(socket.served)
      // The receiver drops its idle connection just as the next request arrives on it.
      if (socket.served > 1) return socket.destroy()
      req.resume()
      req.on('end', () => res.end('ok'))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
    const pool = createConnectionPool()
    try {
      expect(await sendWebhook(url, '{}', {}, { pool })).toMatchObject({ statusCode: 200 })
      expect(await sendWebhook(url, '{}', {}, { pool })).toMatchObject({ statusCode: 200, error: null })
      expect(seen).toEqual([1, 2, 1])
    } finally {
      pool.close()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('probing a receiver', () => {
  it('answers null when a connection opens, and sends nothing on it', async () => {
    receiver = await startReceiver()
    expect(await probeConnection(receiver.url)).toBeNull()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(receiver.received).toHaveLength(0)
  })

  it('words a refused connection as a send does, and refuses addresses the check forbids', async () => {
    receiver = await startReceiver()
    const url = receiver.url
    await receiver.close()
    receiver = undefined
    const port = new URL(url).port
    expect(await probeConnection(url)).toBe(`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port}`)
    expect(await sendWebhook(url, '{}', {})).toMatchObject({ error: `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port}` })
    const hostile = url.replace('127.0.0.1', 'rebind.partner.test')
    expect(await probeConnection(hostile, { isForbidden: () => true, resolve: async () => ['127.0.0.1'] })).toMatch(/^EFORBIDDEN: rebind\.partner\.test resolves to a forbidden address 127\.0\.0\.1$/)
  })

  it('refuses an address written in the URL without connecting, when the check forbids it', async () => {
    receiver = await startReceiver()
    const forbidLoopback = { isForbidden: (address: string) => address === '127.0.0.1' }
    expect(await probeConnection(receiver.url, forbidLoopback)).toBe('refused: 127.0.0.1 is a local or private address')
    expect(await sendWebhook(receiver.url, '{}', {}, forbidLoopback)).toEqual({ statusCode: null, error: 'refused: 127.0.0.1 is a local or private address', durationMs: 0, refused: true })
    expect(receiver.received).toHaveLength(0)
    expect(await sendWebhook(receiver.url, '{}', {}, { isForbidden: () => false })).toMatchObject({ statusCode: 200 })
  })

  it('shares its outcome with sends and probes to the same destination meanwhile', async () => {
    receiver = await startReceiver()
    const url = receiver.url.replace('127.0.0.1', 'receiver.partner.test')
    const state = { calls: 0, failing: true }
    const pool = createConnectionPool()
    const options = { isForbidden: () => false, resolve: slowResolver(state), pool }
    const [probe, send, again] = await Promise.all([probeConnection(url, options), sendWebhook(url, '{}', {}, options), probeConnection(url, options)])
    expect(state.calls).toBe(1)
    expect([probe, send.error, again]).toEqual(Array(3).fill('ENOTFOUND: getaddrinfo ENOTFOUND receiver.partner.test'))
    expect(pool.opening.size).toBe(0)
    pool.close()
  })
})
