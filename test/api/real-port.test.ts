import { randomUUID } from 'node:crypto'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { listenSandbox } from '../../src/server/listen.js'
import { listenTestApi, newKey } from '../helpers/api.js'

let sandbox: Sandbox
let server: Awaited<ReturnType<typeof listenTestApi>>
const key = newKey('port')

beforeAll(async () => {
  sandbox = await createSandbox({ storage: 'memory', rateLimit: { limit: 1000, windowSeconds: 60 } })
  server = await listenTestApi(sandbox)
})
afterAll(async () => {
  await server.close()
  await sandbox.close()
})

async function post(path: string, body: unknown, idempotencyKey = randomUUID()) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify(body),
  })
  return { status: response.status, headers: response.headers, body: await response.json() }
}

describe('over a real port', () => {
  it('walks a loan from start_collateral_transfer to a closed loan', async () => {
    const flow = '/api/sandbox/loans/flow'
    expect((await post(flow, { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' })).status).toBe(200)
    expect((await post(flow, { action: 'confirm_btc', tx_hash: 'tx1', confirmations: 3 })).status).toBe(200)
    expect((await post(flow, { action: 'run_kyt' })).status).toBe(200)
    const issued = await post(flow, { action: 'complete_payout' })
    const loanId = issued.body.activeLoans[0].id
    const path = `/api/sandbox/loans/${loanId}/repayment-flow`
    const started = await post(path, { action: 'start_payment', repayment_kind: 'full_principal' })
    const operation_id = started.body.sandboxFlow.repaymentOperations[0].operation_id
    for (const step of [{ action: 'confirm_usdt', tx_hash: 'tx2', confirmations: 20 }, { action: 'run_kyt' }, { action: 'complete_settlement' }]) {
      expect((await post(path, { ...step, operation_id })).status).toBe(200)
    }
    const closed = await post(path, { action: 'complete_collateral_return', operation_id })
    expect(closed.status).toBe(200)
    expect(closed.body.loanHistory[0]).toMatchObject({ id: loanId, status: 'closed' })
    expect(closed.headers.get('x-request-id')).toBe(closed.body.request_id)
    expect(closed.headers.get('ratelimit-limit')).toBe('1000')
  })

  it('refuses a chunked body over 1 MiB with 413', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
    let sent = 0
    const stream = new ReadableStream({
      pull(controller) {
        if (sent++ < 20) controller.enqueue(chunk)
        else controller.close()
      },
    })
    const response = await fetch(`${server.url}/api/sandbox/loans`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect(response.status).toBe(413)
    expect((await response.json()).error_code).toBe('PAYLOAD_TOO_LARGE')
  })
})

/** Sends raw bytes and reads the whole answer until the server closes the connection. */
function sendRaw(url: string, bytes: string): Promise<string> {
  const { port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes))
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { answer += chunk })
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
  })
}

describe('requests Node cannot parse, through listenSandbox', () => {
  it('answers oversized headers with 431 and malformed HTTP with 400, both in the JSON envelope', async () => {
    const listener = await listenSandbox(sandbox)
    try {
      const long = await sendRaw(listener.url, `GET /api/sandbox/loans?${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`)
      expect(long).toMatch(/^HTTP\/1\.1 431 /)
      const [head, body] = long.split('\r\n\r\n')
      const json = JSON.parse(body!)
      expect(json).toMatchObject({ error_code: 'INVALID_REQUEST', request_id: expect.stringMatching(/^req_/) })
      expect(json.error).toContain('headers are larger')
      expect(head).toContain(`x-request-id: ${json.request_id}`)
      const garbage = await sendRaw(listener.url, 'NOT HTTP AT ALL\r\n\r\n')
      expect(garbage).toMatch(/^HTTP\/1\.1 400 /)
      expect(JSON.parse(garbage.split('\r\n\r\n')[1]!).error_code).toBe('INVALID_REQUEST')
      // The server still answers ordinary requests afterwards.
      expect((await fetch(`${listener.url}/api/sandbox/config`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
    } finally {
      await listener.close()
    }
  })
})
