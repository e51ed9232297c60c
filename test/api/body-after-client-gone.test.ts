import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenSandbox } from '../../src/server/listen.js'
import type { RequestLogEntry } from '../../src/server/request-log.js'
import { newKey } from '../helpers/api.js'

let cleanup: (() => Promise<void>) | undefined
afterEach(async () => {
  await cleanup?.()
  cleanup = undefined
})

/** Sends REQUEST on a new connection and hangs up once the server has had it for a moment. */
async function sendAndHangUp(url: string, request: string): Promise<void> {
  const socket = connect({ port: Number(new URL(url).port), host: '127.0.0.1' })
  socket.on('error', () => {})
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(request)
  await new Promise((resolve) => setTimeout(resolve, 100))
  socket.destroy()
}

// The body is read when the route runs: after serve --faults' latency (or a keys-file re-read). A
// client that hung up before then (its own timeout, shorter than the latency) left the request
// waiting for a body that could never come: no line in serve's log, and the request kept in memory.
describe('a client that hangs up before the server reads its body', () => {
  it('gets its request logged once the latency has passed, as a client that hung up mid-body', async () => {
    const lines: RequestLogEntry[] = []
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, onRequest: (entry) => lines.push(entry), faults: { rules: [{ method: 'POST', fault: 'latency', ms: 300 }] } })
    const listener = await listenSandbox(sandbox)
    cleanup = async () => {
      await listener.close()
      await sandbox.close()
    }
    await sendAndHangUp(listener.url, `POST /api/sandbox/loans HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${newKey('gone')}\r\n`
      + 'Content-Type: application/json\r\nIdempotency-Key: gone-1\r\nContent-Length: 100\r\n\r\n{"loan_amount"')
    await expect.poll(() => lines.length, { timeout: 3000 }).toBe(1)
    expect(lines[0]).toMatchObject({ method: 'POST', path: '/api/sandbox/loans', status: 400, error_code: 'INVALID_REQUEST', idempotency_key: 'gone-1', fault: 'latency 300ms' })
  })
})

describe('serve --faults\' latency, with a client whose timeout is shorter', () => {
  it('executes the request as usual: its whole body had come, and a retry with the same key gets the replay', async () => {
    const lines: RequestLogEntry[] = []
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, onRequest: (entry) => lines.push(entry), faults: { rules: [{ method: 'POST', fault: 'latency', ms: 300, first_attempt: true }] } })
    const listener = await listenSandbox(sandbox)
    cleanup = async () => {
      await listener.close()
      await sandbox.close()
    }
    const key = newKey('timeout')
    const post = (signal?: AbortSignal) => fetch(`${listener.url}/api/sandbox/loans`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'timed-out-1' },
      body: JSON.stringify({ collateral_btc: 0.5, loan_amount: 20000 }),
      signal,
    })
    await expect(post(AbortSignal.timeout(100))).rejects.toThrow()
    // Read only after the latency, from a connection already closed, it was not executed: logged 400.
    await expect.poll(() => lines.length, { timeout: 3000 }).toBe(1)
    expect(lines[0]).toMatchObject({ status: 200, fault: 'latency 300ms' })
    const retry = await post()
    expect(retry.status).toBe(200)
    expect(await retry.json()).toMatchObject({ idempotency_replayed: true })
  })
})
