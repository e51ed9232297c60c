import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxClient, SandboxApiError, sendRequest } from '../../src/client/index.js'

// Cloudflare, in front of a hosted sandbox, answers 520-524 with its own HTML page when it gets
// no answer from the server behind it: a gateway's error, as a 502 is.
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => { for (const cleanup of cleanups.splice(0)) await cleanup() })

/** A server on 127.0.0.1 that answers the first FAILURES requests STATUS with a CDN's page, then 200 JSON. */
async function startBehindCdn(status: number, failures = 1): Promise<string> {
  let count = 0
  const server = createServer((req, res) => {
    req.resume()
    if (count++ >= failures) return res.writeHead(200, { 'content-type': 'application/json' }).end('{"request_id":"req_1"}')
    res.writeHead(status, { 'content-type': 'text/html' }).end(`<title>${status}: Connection timed out</title>`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('a CDN\'s gateway errors', () => {
  it('are retried as a proxy\'s 502 is, a POST with its Idempotency-Key included', async () => {
    for (const status of [520, 521, 522, 523, 524]) {
      const baseUrl = await startBehindCdn(status)
      const waits: number[] = []
      const answer = await sendRequest({ baseUrl, onRetryWait: ({ ms }) => waits.push(ms) }, { method: 'POST', path: '/api/sandbox/loans', body: {}, idempotencyKey: 'cdn-retry-1' })
      expect(answer.status, String(status)).toBe(200)
      expect(answer.attempts, String(status)).toBe(2)
      expect(waits, String(status)).toEqual([250])
    }
  })

  it('are not retried when TLS between the CDN and the server fails (525, 526): waiting does not change it', async () => {
    for (const status of [525, 526]) {
      const answer = await sendRequest({ baseUrl: await startBehindCdn(status) }, { method: 'GET', path: '/api/sandbox/config' })
      expect(answer.status, String(status)).toBe(status)
      expect(answer.attempts, String(status)).toBe(1)
    }
  })

  it('still there at the last attempt, is the SandboxApiError of that answer (status 502, errorCode null), as the README\'s client section says', async () => {
    const client = createSandboxClient({ baseUrl: await startBehindCdn(502, Infinity), apiKey: 'sk_sandbox_gateway_spent_0001', retries: 1 })
    const error = await client.getConfig().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SandboxApiError)
    expect(error).toMatchObject({ status: 502, errorCode: null })
  })
})
