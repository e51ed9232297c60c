import { connect } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenSandbox } from '../../src/server/listen.js'
import { checkAnswerAgainstContract } from '../helpers/contract.js'
import { newKey } from '../helpers/api.js'

// The answers Node's HTTP layer gives before a route runs (decisions: "in the same JSON envelope")
// are answers of the operation the client called: the OpenAPI document must declare them too.
const TIMEOUTS = { headersMs: 300, requestMs: 600, idleSocketMs: 600, checkIntervalMs: 5000 }

let cleanup: (() => Promise<void>) | undefined
afterEach(async () => {
  await cleanup?.()
  cleanup = undefined
})

interface RawAnswer { status: number; headers: Headers; body: string }

/** Sends REQUEST as bytes and reads until the server closes: status, headers and body. */
function sendRaw(url: string, request: string): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect({ port: Number(new URL(url).port), host: '127.0.0.1' })
    let text = ''
    socket.on('data', (chunk: Buffer) => { text += chunk.toString('utf8') })
    socket.on('error', () => {})
    socket.once('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n')
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers = new Headers(lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as [string, string]))
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body })
    })
    socket.write(request)
  })
}

describe('answers made before any route runs, against the OpenAPI document', () => {
  it('declares the 408 of a body that stops coming and the 431 of oversized headers on the operations that answer them', async () => {
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false })
    const listener = await listenSandbox(sandbox, { timeouts: TIMEOUTS })
    cleanup = async () => {
      await listener.close()
      await sandbox.close()
    }
    const key = newKey('transport')
    const stalled = await sendRaw(listener.url, `POST /api/sandbox/loans HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n`
      + 'Content-Type: application/json\r\nIdempotency-Key: stall-1\r\nContent-Length: 100\r\n\r\n{"loan_amount"')
    expect([stalled.status, JSON.parse(stalled.body).error_code]).toEqual([408, 'INVALID_REQUEST'])
    expect(checkAnswerAgainstContract('POST', '/api/sandbox/loans', stalled.status, stalled.headers, stalled.body)).toEqual([])

    const oversized = await sendRaw(listener.url, `GET /api/sandbox/config HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n`
      + `X-Padding: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`)
    expect([oversized.status, JSON.parse(oversized.body).error_code]).toEqual([431, 'INVALID_REQUEST'])
    expect(checkAnswerAgainstContract('GET', '/api/sandbox/config', oversized.status, oversized.headers, oversized.body)).toEqual([])
  })
})
