import { connect } from 'node:net'
import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenSandbox, type SandboxListener } from '../../src/server/listen.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { LOAN, newKey } from '../helpers/api.js'

// HTTP/1.1 pipelining (RFC 9112 9.3.2): requests sent back to back on one connection without
// waiting for the answers. Their answers come in order; a request after an unsafe one (a POST)
// must also be processed after it, or a GET answers the state from before the POST.

/** Sends REQUESTS in one write on one connection and returns the JSON bodies of the answers, in order. */
async function sendPipelined(url: string, requests: string[], answers: number): Promise<Array<Record<string, unknown>>> {
  const { port } = new URL(url)
  const socket = connect({ port: Number(port), host: '127.0.0.1' })
  let text = ''
  socket.on('data', (chunk: Buffer) => { text += chunk.toString('utf8') })
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(requests.join(''))
  const split = () => text.split(/(?=HTTP\/1\.1 \d{3} )/).filter((part) => part.includes('\r\n\r\n'))
  // Hang bound only: each answer is a small JSON object sent whole.
  for (let waited = 0; waited < 10_000 && !(split().length === answers && text.endsWith('}')); waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  socket.destroy()
  return split().map((part) => JSON.parse(part.slice(part.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>)
}

function httpRequest(method: string, path: string, key: string, body?: unknown, idempotencyKey?: string): string {
  const text = body === undefined ? '' : JSON.stringify(body)
  const idem = idempotencyKey ? `Idempotency-Key: ${idempotencyKey}\r\n` : ''
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n${idem}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
}

describe('pipelined requests on one connection', () => {
  let sandbox: Sandbox | undefined
  let listener: SandboxListener | undefined
  afterEach(async () => {
    await listener?.close()
    await sandbox?.close()
  })

  it('processes each request after the one before it: a GET sees the POST sent ahead of it, a retry gets the replay', async () => {
    // The POST's write waits on a gate: without ordering, the GET behind it is answered meanwhile
    // (then the gate opens); with it, the GET waits, and the gate opens after a hang bound.
    const memory = memoryDriver()
    let gated = false
    let openGate!: () => void
    const gate = new Promise<void>((resolve) => { openGate = resolve })
    const driver = defineDriver(() => ({
      ...memory,
      name: 'gated-memory',
      async setItem(key: string, value: string) {
        if (gated) {
          setTimeout(openGate, 1000)
          await gate
        }
        return memory.setItem!(key, value, {})
      },
    }))
    sandbox = await createSandbox({ storage: createStorage({ driver: driver(undefined) }), rateLimit: false, logError: () => {} })
    listener = await listenSandbox(sandbox)
    const key = newKey('pipelined')
    gated = true
    const answers = await sendPipelined(listener.url, [
      httpRequest('POST', '/api/sandbox/loans', key, LOAN, 'first-loan'),
      httpRequest('GET', '/api/sandbox/loans', key),
      httpRequest('POST', '/api/sandbox/loans', key, LOAN, 'first-loan'),
    ], 3)
    openGate()
    expect(answers).toHaveLength(3)
    const [created, read, retried] = answers as Array<{ activeLoans?: Array<{ id: string }>; idempotency_replayed?: boolean; error_code?: string }>
    expect(created!.activeLoans).toHaveLength(1)
    expect(read!.activeLoans?.map((loan) => loan.id)).toEqual(created!.activeLoans!.map((loan) => loan.id))
    expect([retried!.error_code, retried!.idempotency_replayed]).toEqual([undefined, true])
  })
})
