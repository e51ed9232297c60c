import { connect } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenSandbox, type SandboxListener } from '../../src/server/listen.js'
import type { RequestLogEntry } from '../../src/server/request-log.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { newKey } from '../helpers/api.js'

// Short limits, checked often: Node's own whole-request check answers the trickling client.
const TIMEOUTS = { headersMs: 300, requestMs: 600, keepAliveMs: 200, idleSocketMs: 5000, checkIntervalMs: 50 }

let sandbox: Sandbox
let listener: SandboxListener
const lines: RequestLogEntry[] = []

beforeAll(async () => {
  sandbox = await createSandbox({ storage: 'memory', rateLimit: false, onRequest: (entry) => lines.push(entry) })
  listener = await listenSandbox(sandbox, { timeouts: TIMEOUTS })
})
afterAll(async () => {
  await listener.close()
  await sandbox.close()
})

it('logs a body that did not arrive in time as the 408 the client got, under its request_id (not a 400 under another id)', async () => {
  const socket = connect({ port: Number(new URL(listener.url).port), host: '127.0.0.1' })
  let answer = ''
  socket.on('data', (chunk: Buffer) => { answer += chunk.toString('latin1') })
  socket.on('error', () => {})
  const closed = new Promise((resolve) => socket.once('close', resolve))
  socket.write(`POST /api/sandbox/loans HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${newKey('trickle')}\r\n`
    + 'Content-Type: application/json\r\nIdempotency-Key: trickle-log\r\nContent-Length: 100000\r\n\r\n')
  const trickle = setInterval(() => socket.writable && socket.write(' '), 50)
  await closed
  clearInterval(trickle)
  expect(answer).toMatch(/^HTTP\/1\.1 408 /)
  const sent = JSON.parse(answer.split('\r\n\r\n')[1]!)
  await expect.poll(() => lines.length, { timeout: 3000 }).toBe(1)
  expect(lines[0]).toMatchObject({ request_id: sent.request_id, method: 'POST', path: '/api/sandbox/loans', status: 408, error_code: 'INVALID_REQUEST' })
})
