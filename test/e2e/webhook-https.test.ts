import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, startServe, waitUntil } from '../helpers/cli.js'

const TLS = join(import.meta.dirname, '../fixtures/tls')
let receiver: Server | undefined
afterEach(async () => {
  killAll()
  receiver?.closeAllConnections()
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)))
  receiver = undefined
})

describe('webhook delivery over https', () => {
  it('delivers to an https receiver and reuses the connection for the next event', async () => {
    const received: Array<{ event: string; socket: Socket }> = []
    receiver = createServer({ key: readFileSync(join(TLS, 'key.pem')), cert: readFileSync(join(TLS, 'cert.pem')) }, (req, res) => {
      req.resume()
      req.on('end', () => {
        received.push({ event: String(req.headers['x-service-webhook-event']), socket: req.socket })
        res.end('ok')
      })
    })
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve))
    const url = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    // The server trusts the test certificate the way a machine trusts a private CA.
    const server = await startServe(['--port', '0', '--storage', 'memory', '--allow-local-webhooks'], { env: { NODE_EXTRA_CA_CERTS: join(TLS, 'cert.pem') } })
    const post = (path: string, body: unknown) => fetch(new URL(path, server.url), {
      method: 'POST',
      headers: { authorization: 'Bearer sk_sandbox_https_e2e_000000000', 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify(body),
    })
    expect((await post('/api/sandbox/webhooks', { url })).status).toBe(200)
    expect((await post('/api/sandbox/webhooks/test', {})).status).toBe(200)
    await waitUntil(() => received.length === 1, 5000, 'the first delivery')
    expect((await post('/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 })).status).toBe(200)
    await waitUntil(() => received.length === 2, 5000, 'the second delivery')
    expect(received.map((item) => item.event)).toEqual(['sandbox.webhook.test', 'sandbox.loan.issued'])
    expect(received[1]!.socket).toBe(received[0]!.socket)
    // serve prints the line once the attempt is recorded, a moment after the receiver had it.
    const delivered = /sandbox\.loan\.issued -> https:\/\/127\.0\.0\.1:\d+\/hook 200 delivered/
    await waitUntil(() => delivered.test(server.output()), 5000, 'serve\'s line for the delivery')
    expect(await server.stop()).toBe(0)
  })
})
