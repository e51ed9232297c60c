import { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'
import type { H3Event } from 'h3'
import { describe, expect, it } from 'vitest'
import { readRawBody } from '../../src/server/body.js'

/** Settles with 'still waiting' when PROMISE has not settled within MS: a hang bound. */
function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<'still waiting'>((resolve) => { timer = setTimeout(() => resolve('still waiting'), ms) })
  return Promise.race([promise, waited]).finally(() => clearTimeout(timer))
}

// A request can wait before its route reads the body (a keys-file re-read in progress): a client
// that hung up meanwhile left a stream that emits nothing more, and the read waited for good.
describe('reading the body of a request whose connection closed before the read began', () => {
  it('refuses it as a body the client did not finish sending, rather than waiting for good', async () => {
    const request = new IncomingMessage(new Socket())
    request.push('{"loan_amount"')
    request.destroy()
    const event = { req: new Request('http://sandbox.test/', { method: 'POST', headers: { 'content-length': '100' } }), runtime: { node: { req: request } }, context: {} } as unknown as H3Event
    const read = readRawBody(event).catch((error: Error) => error)
    const outcome = await settledWithin(read, 2000)
    expect(outcome).toMatchObject({ status: 400, code: 'INVALID_REQUEST', message: 'The client closed the connection before the whole body was sent.' })
  })
})
