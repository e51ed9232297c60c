import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenSandbox } from '../../src/server/listen.js'
import type { RequestLogEntry } from '../../src/server/request-log.js'
import { startWebhookListener, type ReceivedWebhook } from '../../src/webhook-tools/webhook-listener.js'
import { newKey } from '../helpers/api.js'

// serve's limits scaled down: the whole-request limit equals the idle one (both 30 s there) and the
// limits are checked far less often than they run out (every 1 s there), so the idle cut comes first.
const TIMEOUTS = { headersMs: 300, requestMs: 600, idleSocketMs: 600, checkIntervalMs: 5000 }

let cleanup: (() => Promise<void>) | undefined
afterEach(async () => {
  await cleanup?.()
  cleanup = undefined
})

/** Sends REQUEST (headers and the start of a body shorter than its Content-Length), then nothing; resolves with all the server sent. */
function sendAndStall(url: string, request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port: Number(new URL(url).port), host: '127.0.0.1' })
    let answer = ''
    socket.on('data', (chunk: Buffer) => { answer += chunk.toString('latin1') })
    socket.on('error', () => {})
    socket.once('close', () => resolve(answer))
    socket.write(request)
  })
}

describe('a client whose body stops coming (a Content-Length larger than the body it sends)', () => {
  it('gets serve\'s 408 INVALID_REQUEST envelope, not a connection closed with no answer, and serve\'s line says the same', async () => {
    const lines: RequestLogEntry[] = []
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, onRequest: (entry) => lines.push(entry) })
    const listener = await listenSandbox(sandbox, { timeouts: TIMEOUTS })
    cleanup = async () => {
      await listener.close()
      await sandbox.close()
    }
    const answer = await sendAndStall(listener.url, `POST /api/sandbox/loans HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${newKey('stall')}\r\n`
      + 'Content-Type: application/json\r\nIdempotency-Key: stall-1\r\nContent-Length: 100\r\n\r\n{"loan_amount"')
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/)
    const json = JSON.parse(answer.split('\r\n\r\n')[1]!)
    expect(json).toMatchObject({ error_code: 'INVALID_REQUEST', error: 'The request did not arrive in time: this server waits 300 ms for the headers and 600 ms for the whole request.' })
    // The line serve prints for it names the answer the client got (it said 400 under another id, as if the client hung up).
    await expect.poll(() => lines.length, { timeout: 3000 }).toBe(1)
    expect(lines[0]).toMatchObject({ request_id: json.request_id, status: 408, error_code: 'INVALID_REQUEST' })
    // The server still answers the next client.
    const config = await fetch(`${listener.url}/api/sandbox/config`, { headers: { authorization: `Bearer ${newKey('after')}` } })
    expect(config.status).toBe(200)
    expect(lines.at(-1)).toMatchObject({ path: '/api/sandbox/config', status: 200 })
  })

  it('gets webhook listen\'s 408 too, and is reported as no delivery', async () => {
    const received: ReceivedWebhook[] = []
    const listener = await startWebhookListener({ port: 0, onDelivery: (delivery) => received.push(delivery), timeouts: TIMEOUTS })
    cleanup = listener.close
    const answer = await sendAndStall(listener.url, 'POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n{"id":"evt_cut"')
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout')
    expect(received).toEqual([])
  })

  it('still has its connection cut silently when the idle limit is the shorter one (the request limit not yet passed)', async () => {
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false })
    const listener = await listenSandbox(sandbox, { timeouts: { ...TIMEOUTS, requestMs: 5000 } })
    cleanup = async () => {
      await listener.close()
      await sandbox.close()
    }
    const answer = await sendAndStall(listener.url, `POST /api/sandbox/loans HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${newKey('stall')}\r\n`
      + 'Content-Type: application/json\r\nIdempotency-Key: stall-2\r\nContent-Length: 100\r\n\r\n{"loan_amount"')
    expect(answer).toBe('')
  })
})
