import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { sendRequest } from '../../src/client/index.js'

// The Retry-After a 429 or a proxy's 503 carries as infrastructure in front of a hosted sandbox
// sends it: twice (a CDN's beside the server's), as a date, or as something that is neither.
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => { for (const cleanup of cleanups.splice(0)) await cleanup() })

/** A server on 127.0.0.1 that answers the first request 429 with RETRY_AFTER (raw header values), then 200. */
async function startRateLimited(status: number, retryAfter: string[]): Promise<string> {
  let count = 0
  const server = createServer((req, res: ServerResponse) => {
    req.resume()
    if (count++ > 0) return res.writeHead(200, { 'content-type': 'application/json' }).end('{"request_id":"req_1"}')
    // Several values are sent as several Retry-After lines, which fetch joins with ", ".
    res.setHeader('retry-after', retryAfter)
    res.writeHead(status, { 'content-type': 'text/html' }).end('<h1>slow down</h1>')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function waitAsked(status: number, retryAfter: string[]): Promise<number[]> {
  const baseUrl = await startRateLimited(status, retryAfter)
  const waits: number[] = []
  const answer = await sendRequest({ baseUrl, maxRetryAfterMs: 60_000, onRetryWait: ({ ms }) => waits.push(ms) }, { method: 'GET', path: '/api/sandbox/config' })
  expect(answer.status).toBe(200)
  return waits
}

describe('the Retry-After of an answer infrastructure sent', () => {
  it('a Retry-After sent twice waits its first value, not 0 ms (Date.parse read "1, 1" as a day in 2001)', async () => {
    expect(await waitAsked(429, ['1', '1'])).toEqual([1000])
    expect(await waitAsked(503, ['1', '1'])).toEqual([1000])
  })

  it('an HTTP date waits until then, sent once or twice', async () => {
    for (const times of [1, 2]) {
      // An HTTP date has whole seconds: 2 s ahead is 1 to 2 s away.
      const date = new Date(Date.now() + 2000).toUTCString()
      const [ms] = await waitAsked(429, Array.from({ length: times }, () => date))
      expect(ms).toBeGreaterThan(900)
      expect(ms).toBeLessThanOrEqual(2000)
    }
  })

  it('a Retry-After sent twice in two forms waits its first value: seconds beside a date, or a date beside seconds', async () => {
    // The date is 30 s ahead: taken for the first value, the wait would be about 30 s, not 1 s.
    const date = new Date(Date.now() + 30_000).toUTCString()
    expect(await waitAsked(429, ['1', date])).toEqual([1000])
    const [ms] = await waitAsked(429, [new Date(Date.now() + 2000).toUTCString(), '30'])
    expect(ms).toBeGreaterThan(900)
    expect(ms).toBeLessThanOrEqual(2000)
  })

  it('an asctime date (no zone named) is GMT, as HTTP dates are, not the local time of the machine', async () => {
    vi.stubEnv('TZ', 'America/New_York')
    try {
      const at = new Date(Date.now() + 2000)
      const [weekday, , month] = at.toUTCString().replace(',', '').split(' ')
      const asctime = `${weekday} ${month} ${String(at.getUTCDate()).padStart(2, ' ')} ${at.toISOString().slice(11, 19)} ${at.getUTCFullYear()}`
      const [ms] = await waitAsked(429, [asctime])
      expect(ms).toBeGreaterThan(900)
      expect(ms).toBeLessThanOrEqual(2000)
    } finally {
      vi.unstubAllEnvs()
    }
  })

  it('a value that is neither seconds nor a date waits the 1 s a missing one does, not 0 ms or a hex number of seconds', async () => {
    for (const value of ['-1', '0x2', 'soon']) expect(await waitAsked(429, [value])).toEqual([1000])
  })
})
