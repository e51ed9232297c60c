import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { listenSandbox, type SandboxListener } from '../../src/server/listen.js'
import { checkAnswerAgainstContract } from '../helpers/contract.js'

let sandbox: Sandbox
let listener: SandboxListener
beforeAll(async () => {
  sandbox = await createSandbox({ storage: 'memory', rateLimit: false })
  listener = await listenSandbox(sandbox)
})
afterAll(async () => {
  await listener.close()
  await sandbox.close()
})

/** Sends BYTES on a new connection and resolves with all the server wrote back. */
function sendRaw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(listener.port, '127.0.0.1', () => socket.write(bytes))
    let answer = ''
    socket.on('data', (chunk) => { answer += chunk })
    socket.on('error', reject)
    socket.on('end', () => resolve(answer))
  })
}

describe('an HTTP/1.1 request without a Host header', () => {
  it('gets a 400 in the JSON envelope with INVALID_REQUEST, as other requests that are not valid HTTP do', async () => {
    const answer = await sendRaw('GET /api/sandbox/config HTTP/1.1\r\nAuthorization: Bearer sk_sandbox_nohostnohostnohost1\r\n\r\n')
    const [head, body] = answer.split('\r\n\r\n') as [string, string]
    expect(head).toMatch(/^HTTP\/1\.1 400 /)
    expect(head).toMatch(/\r\nconnection: close/i)
    const requestId = /\r\nx-request-id: (req_\w+)/i.exec(head)?.[1]
    expect(JSON.parse(body)).toEqual({ request_id: requestId, error_code: 'INVALID_REQUEST', error: 'An HTTP/1.1 request needs a Host header.' })
    // An answer of the GET operation called, so the OpenAPI document declares it.
    const headers = new Headers(head.split('\r\n').slice(1).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as [string, string]))
    expect(checkAnswerAgainstContract('GET', '/api/sandbox/config', 400, headers, body)).toEqual([])
  })

  it('leaves HTTP/1.0 without Host, and HTTP/1.1 with one, to the API', async () => {
    for (const request of ['GET /api/sandbox/openapi.json HTTP/1.0\r\n\r\n', 'GET /api/sandbox/openapi.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']) {
      expect(await sendRaw(request)).toMatch(/^HTTP\/1\.1 200 /)
    }
  })
})
