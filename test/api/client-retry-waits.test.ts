import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { sendRequest } from '../../src/client/index.js'

// How long the client waits between attempts, and which proxy answers it retries at all.
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => { for (const cleanup of cleanups.splice(0)) await cleanup() })

type Answer = (res: ServerResponse) => void

/** A server on 127.0.0.1 that answers the n-th request with answers[n] (the last one after). */
async function startScripted(answers: Answer[]): Promise<{ url: string; count: () => number }> {
  let count = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => answers[Math.min(count++, answers.length - 1)]!(res))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, count: () => count }
}

const answer = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => (res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
}
const ok = answer(200, { ok: true })

describe('client retry waits', () => {
  it('waits no longer than maxRetryAfterMs for a 429 that asks for more', async () => {
    const server = await startScripted([answer(429, { error_code: 'RATE_LIMITED' }, { 'retry-after': '5' }), ok])
    const waits: number[] = []
    const got = await sendRequest({ baseUrl: server.url, maxRetryAfterMs: 30, onRetryWait: ({ ms }) => waits.push(ms) }, { method: 'GET', path: '/x' })
    expect(got.status).toBe(200)
    expect(waits).toEqual([30])
  })

  it("honours a proxy's Retry-After on a 503 when longer than the backoff, up to maxRetryAfterMs", async () => {
    const server = await startScripted([answer(503, {}, { 'retry-after': '1' }), ok])
    const waits: Array<{ reason: string; ms: number }> = []
    const got = await sendRequest({ baseUrl: server.url, maxRetryAfterMs: 400, onRetryWait: ({ reason, ms }) => waits.push({ reason, ms }) }, { method: 'GET', path: '/x' })
    expect(got.status).toBe(200)
    expect(waits).toEqual([{ reason: 'gateway_error', ms: 400 }])
  })

  it("does not retry the API's own 503 (a JSON error_code): it is the answer, not a proxy's", async () => {
    const server = await startScripted([answer(503, { error_code: 'SERVICE_UNAVAILABLE', message: 'storage down' }), ok])
    const got = await sendRequest({ baseUrl: server.url }, { method: 'GET', path: '/x' })
    expect(got.status).toBe(503)
    expect(got.errorCode).toBe('SERVICE_UNAVAILABLE')
    expect(got.attempts).toBe(1)
    expect(server.count()).toBe(1)
  })
})
