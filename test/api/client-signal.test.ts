import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxClient } from '../../src/client/index.js'
import { startSilentServer } from '../helpers/silent-server.js'

/** The client's `signal` option, as the README says: it cancels a request and its retries, and the call rejects with its reason. */

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/** A server on 127.0.0.1 that answers every request with HANDLE, counting them. */
async function startServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; requests(): number }> {
  let requests = 0
  const server = createServer((req, res) => {
    requests++
    req.resume().on('end', () => handle(req, res))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests }
}

/** Far past the test's own timeout: a request or wait that ignored its signal would end the test by it. */
const MINUTE_MS = 60_000

describe('createSandboxClient with a signal', () => {
  it('already aborted: sends nothing, tells no attempt, and rejects with the reason', async () => {
    const server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"request_id":"req_1"}'))
    const reason = new Error('cancelled before it began')
    const told: string[] = []
    const client = createSandboxClient({ baseUrl: server.url, signal: AbortSignal.abort(reason), onAttempt: () => told.push('attempt') })
    await expect(client.getConfig()).rejects.toBe(reason)
    expect(told).toEqual([])
    expect(server.requests()).toBe(0)
  })

  it('aborted while the server has not answered: rejects with the reason and closes the connection, without waiting for timeoutMs', async () => {
    const silent = await startSilentServer()
    cleanups.push(silent.close)
    const controller = new AbortController()
    const reason = new Error('no longer needed')
    const told: string[] = []
    const client = createSandboxClient({ baseUrl: silent.url, timeoutMs: MINUTE_MS, signal: controller.signal, onAttempt: () => told.push('attempt'), onRetryWait: () => told.push('retry wait') })
    const call = client.getConfig()
    await expect.poll(silent.requests).toBe(1)
    controller.abort(reason)
    await expect(call).rejects.toBe(reason)
    await expect.poll(silent.dropped).toBe(1)
    expect(told).toEqual([])
  })

  it('aborted as a 429\'s wait of a minute begins (from onRetryWait): rejects with the reason and sends nothing more', async () => {
    const server = await startServer((_req, res) => res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '60' }).end('{"request_id":"req_1","error_code":"SANDBOX_RATE_LIMIT_EXCEEDED"}'))
    const controller = new AbortController()
    const reason = new Error('not waiting a minute')
    const client = createSandboxClient({ baseUrl: server.url, maxRetryAfterMs: 2 * MINUTE_MS, signal: controller.signal, onRetryWait: () => controller.abort(reason) })
    await expect(client.getConfig()).rejects.toBe(reason)
    expect(server.requests()).toBe(1)
  })
})
