import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxClient } from '../../src/client/index.js'
import { startSilentServer } from '../helpers/silent-server.js'

// A partner's backend keeps one client and cancels one call (its own caller hung up, a job was
// cancelled): only the client's own `signal` option could, so each such call needed a client of
// its own, and `client.getState({ signal })` did not compile.

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/** Far past the test's own timeout: a call that ignored its signal would end the test by it. */
const MINUTE_MS = 60_000

describe('a signal for one call of a shared client', () => {
  it('cancels that call (a GET the server does not answer) and leaves the client usable', async () => {
    const silent = await startSilentServer()
    cleanups.push(() => silent.close())
    const client = createSandboxClient({ baseUrl: silent.url, timeoutMs: MINUTE_MS })
    const controller = new AbortController()
    const reason = new Error('the caller hung up')
    const call = client.getState({ signal: controller.signal })
    setTimeout(() => controller.abort(reason), 100)
    await expect(call).rejects.toBe(reason)
    // Another call of the same client is not cancelled by that signal.
    const other = new AbortController()
    const next = client.listLoans({ signal: other.signal })
    setTimeout(() => other.abort(), 100)
    await expect(next).rejects.toMatchObject({ name: 'AbortError' })
    expect(silent.requests()).toBe(2)
  }, 10_000)

  it('cancels a POST in its wait for a retry, and joins the client\'s own signal', async () => {
    let requests = 0
    const server = createServer((req, res) => {
      requests++
      req.resume().on('end', () => res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '60' }).end('{"request_id":"req_1","error_code":"SANDBOX_RATE_LIMIT_EXCEEDED","error":"slow down"}'))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
    const clientWide = new AbortController()
    const client = createSandboxClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, signal: clientWide.signal, maxRetryAfterMs: MINUTE_MS })
    const mine = new AbortController()
    const posted = client.createLoan({ collateral_btc: 0.01, loan_amount: 200 }, { signal: mine.signal })
    setTimeout(() => mine.abort(new Error('job cancelled')), 200)
    await expect(posted).rejects.toThrow('job cancelled')
    const other = client.testWebhook({ signal: new AbortController().signal })
    setTimeout(() => clientWide.abort(new Error('shutting down')), 200)
    await expect(other).rejects.toThrow('shutting down')
    expect(requests).toBe(2)
  }, 10_000)
})
