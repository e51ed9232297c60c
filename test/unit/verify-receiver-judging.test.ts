import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { verifyReceiver } from '../../src/webhook-tools/verify-receiver.js'

const SECRET = 'whsec_verify_receiver_judging'
let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  server = undefined
})

/** A receiver on 127.0.0.1 that answers verified deliveries `good` and the others as `bad` says (null: closes without an answer). */
async function startJudge(good: number, bad: number | null): Promise<string> {
  server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      let verified = true
      try {
        verifyWebhook({ secret: SECRET, body: Buffer.concat(chunks), headers: req.headers })
      } catch {
        verified = false
      }
      const status = verified ? good : bad
      if (status === null) return req.socket.destroy()
      res.writeHead(status).end()
    })
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`
}

describe('webhook verify judges answers', () => {
  it('counts only 2xx as accepting: a receiver answering 300 to the good deliveries fails them', async () => {
    const report = await verifyReceiver({ url: await startJudge(300, 401), secret: SECRET })
    const good = report.cases.filter((result) => result.expected === '2xx')
    expect(good.length).toBeGreaterThan(0)
    expect(good.every((result) => !result.ok && result.status === 300)).toBe(true)
    expect(report.cases.filter((result) => result.expected === 'non-2xx').every((result) => result.ok)).toBe(true)
  })

  it('counts no answer to a forged delivery as mishandled, not as a refusal', async () => {
    const report = await verifyReceiver({ url: await startJudge(200, null), secret: SECRET, timeoutMs: 2000 })
    const bad = report.cases.filter((result) => result.expected === 'non-2xx')
    expect(bad.length).toBeGreaterThan(0)
    expect(bad.map((result) => [result.status, result.ok])).toEqual(bad.map(() => [null, false]))
    expect(report.passed).toBe(report.cases.length - bad.length)
  })
})
