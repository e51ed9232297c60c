import { readFileSync } from 'node:fs'
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo, Server } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { killAll, runCli } from '../helpers/cli.js'

const TLS = join(import.meta.dirname, '../fixtures/tls')
const SECRET = 'whsec_verify_tls_receiver_secret'
let receiver: Server | undefined
afterEach(async () => {
  killAll()
  const closing = receiver
  receiver = undefined
  await new Promise((resolve) => (closing ? closing.close(resolve) : resolve(undefined)))
})

/** A correct receiver: 200 to what verifies, 400 to the rest. */
function judge(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = []
  req.on('data', (chunk: Buffer) => chunks.push(chunk))
  req.on('end', () => {
    try {
      verifyWebhook({ secret: SECRET, body: Buffer.concat(chunks), headers: req.headers })
      res.writeHead(200).end()
    } catch {
      res.writeHead(400).end()
    }
  })
}

async function listen(server: Server): Promise<number> {
  receiver = server
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

describe('sandbox webhook verify against an https receiver', () => {
  it('stops at a certificate this machine does not trust (exit 2, what to set), rather than judging the receiver on sends that never reached it', async () => {
    const port = await listen(createHttpsServer({ key: readFileSync(join(TLS, 'key.pem')), cert: readFileSync(join(TLS, 'cert.pem')) }, judge))
    const url = `https://127.0.0.1:${port}/webhooks`
    const untrusted = await runCli(['webhook', 'verify', url, '--secret', SECRET], { env: { NODE_EXTRA_CA_CERTS: '' } })
    expect(untrusted.code).toBe(2)
    expect(untrusted.stdout).not.toContain('✗')
    expect(untrusted.stderr).toMatch(/^sandbox: cannot reach the receiver at https:\/\/127\.0\.0\.1:\d+\/webhooks \(DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate\); its TLS certificate is not trusted here: give its CA with NODE_EXTRA_CA_CERTS=ca\.pem\n$/)
    const json = await runCli(['webhook', 'verify', url, '--secret', SECRET, '--json'], { env: { NODE_EXTRA_CA_CERTS: '' } })
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout).error.code).toBe('UNREACHABLE')
    // The advice works: trusted, the same receiver passes.
    const trusted = await runCli(['webhook', 'verify', url, '--secret', SECRET], { env: { NODE_EXTRA_CA_CERTS: join(TLS, 'cert.pem') } })
    expect(trusted.stdout.trimEnd().split('\n').at(-1)).toMatch(/^\d+ passed, 0 failed$/)
    expect(trusted.code).toBe(0)
  })

  it('does not ask whether a receiver that took the connection is running: an https one given http:// hangs up', async () => {
    const port = await listen(createHttpsServer({ key: readFileSync(join(TLS, 'key.pem')), cert: readFileSync(join(TLS, 'cert.pem')) }, judge))
    const result = await runCli(['webhook', 'verify', `http://127.0.0.1:${port}/webhooks`, '--secret', SECRET])
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(`sandbox: the receiver at http://127.0.0.1:${port}/webhooks took the connection and closed it without answering (ECONNRESET: socket hang up): did it fail on the first delivery? (an https receiver given an http:// URL does this too)\n`)
  })

  it('says so when an https:// URL meets a receiver answering plain HTTP, on one line', async () => {
    const port = await listen(createHttpServer(judge))
    const result = await runCli(['webhook', 'verify', `https://127.0.0.1:${port}/webhooks`, '--secret', SECRET])
    expect(result.code).toBe(2)
    expect(result.stdout).not.toContain('✗')
    expect(result.stderr).toBe(`sandbox: cannot reach the receiver at https://127.0.0.1:${port}/webhooks: it answers plain HTTP, not TLS (ERR_SSL_WRONG_VERSION_NUMBER); use http:// rather than https://\n`)
  })
})
