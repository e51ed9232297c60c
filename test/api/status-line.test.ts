import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { listenTestApi, newKey } from '../helpers/api.js'

let sandbox: Sandbox
let server: Awaited<ReturnType<typeof listenTestApi>>
const key = newKey('status')

beforeAll(async () => {
  sandbox = await createSandbox({ storage: 'memory', rateLimit: { limit: 1000, windowSeconds: 60 }, logError: () => {} })
  server = await listenTestApi(sandbox)
})
afterAll(async () => {
  await server.close()
  await sandbox.close()
})

describe('the HTTP status line', () => {
  // Spec part 4 answers over plain HTTP/1.1; a server there sends a reason phrase after the code.
  // h3 sent none ("HTTP/1.1 409 "), which curl -i, fetch's statusText and Python's
  // raise_for_status ("409 Client Error:  for url") show to the partner as a blank.
  it('carries the standard reason phrase on success, error and envelope answers', async () => {
    const auth = { authorization: `Bearer ${key}` }
    const answers: Array<[string, RequestInit, number, string]> = [
      ['/api/sandbox/config', { headers: auth }, 200, 'OK'],
      ['/api/sandbox/config', {}, 401, 'Unauthorized'],
      ['/api/sandbox/nope', { headers: auth }, 404, 'Not Found'],
      ['/api/sandbox/config', { method: 'PUT', headers: auth }, 405, 'Method Not Allowed'],
      ['/api/sandbox/loans/flow', { method: 'POST', headers: { ...auth, 'idempotency-key': randomUUID() }, body: '{"action":"run_kyt"}' }, 409, 'Conflict'],
      ['/api/sandbox/loans/flow', { method: 'POST', headers: auth, body: '{}' }, 400, 'Bad Request'],
      ['/api/sandbox/openapi.json', {}, 200, 'OK'],
    ]
    for (const [path, init, status, reason] of answers) {
      const response = await fetch(`${server.url}${path}`, init)
      await response.arrayBuffer()
      expect([response.status, response.statusText], `${init.method ?? 'GET'} ${path}`).toEqual([status, reason])
    }
  })
})
