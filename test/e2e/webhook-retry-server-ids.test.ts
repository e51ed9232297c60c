import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'

// The delivery ids `webhook retry` prints come from the server's answer: a server (or a proxy in
// front of it) could put an escape sequence in one, which must not act on the terminal.
describe('webhook retry printing ids a server gave', () => {
  let server: Server
  let baseUrl: string
  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume()
      const delivery = { id: 'whd_\u001b[2Jqueued', event_id: 'evt_1', event_type: 'sandbox.loan.issued', target: 'endpoint', url: 'https://partner.example.com/hooks', status: 'retrying', attempts: 1, last_status_code: 500, last_error: null, next_attempt_at: null, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', request_id: 'req_0' }
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ request_id: 'req_1', endpoint: null, deliveries: [delivery], retried: ['whd_\u001b]0;owned\u0007old'], idempotency_replayed: false }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('shows the retried ids the log does not hold, and those still retrying, with their control characters escaped', async () => {
    const result = await runCli(['webhook', 'retry', '--base-url', baseUrl])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('older than the 50 newest deliveries the log shows: whd_\\u001b]0;owned\\u0007old')
    expect(result.stdout).toContain('sandbox webhook retry whd_\\u001b[2Jqueued')
    expect(result.stdout).not.toContain('\u001b')
  })
})
