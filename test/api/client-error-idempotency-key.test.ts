import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxClient, SandboxApiError, SandboxConnectionError } from '../../src/client/index.js'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenSandbox } from '../../src/server/listen.js'
import { newKey } from '../helpers/api.js'

// The spec's retry rule: after a network error, send the same key, method, endpoint and body. When
// the client's own retries are spent (or it has none), the partner's code retries later: with a
// generated key it could not know, a second call made a second loan.

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

describe('the Idempotency-Key a failed POST was sent with', () => {
  it('is on the connection error, so a later retry with it gets the answer of the first attempt, not a second loan', async () => {
    // The first attempt executes at once and its answer comes 3 s later: the client's 0.5 s timeout cuts it off.
    const sandbox = await createSandbox({ storage: 'memory', logError: () => {}, faults: { rules: [{ method: 'POST', path: '/api/sandbox/loans', fault: 'latency', ms: 3000, first_attempt: true }] } })
    const listener = await listenSandbox(sandbox)
    cleanups.push(async () => { await listener.close(); await sandbox.close() })
    const apiKey = newKey('lost')
    const body = { collateral_btc: 0.01, loan_amount: 200 }
    const impatient = createSandboxClient({ baseUrl: listener.url, apiKey, timeoutMs: 500, retries: 0 })
    const error = await impatient.createLoan(body).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SandboxConnectionError)
    const { idempotencyKey } = error as SandboxConnectionError
    expect(idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)

    const client = createSandboxClient({ baseUrl: listener.url, apiKey })
    const again = await client.createLoan(body, { idempotencyKey: idempotencyKey! })
    expect(again.idempotency_replayed).toBe(true)
    expect((await client.listLoans()).activeLoans).toHaveLength(1)
    // A GET sends none.
    const down = createSandboxClient({ baseUrl: 'http://127.0.0.1:1', retries: 0 })
    expect(await down.getConfig().catch((e: unknown) => e)).toMatchObject({ name: 'SandboxConnectionError', idempotencyKey: null })
  })

  it('is on the API error of a POST, the one the caller gave included, and null for a GET', async () => {
    const server = createServer((_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ request_id: 'req_1', error_code: 'IDEMPOTENCY_KEY_IN_PROGRESS', error: 'still running' }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())))
    const client = createSandboxClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
    const generated = await client.loanFlow({ action: 'run_kyt' }).catch((e: unknown) => e)
    expect(generated).toBeInstanceOf(SandboxApiError)
    expect((generated as SandboxApiError).idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
    expect(await client.loanFlow({ action: 'run_kyt' }, { idempotencyKey: 'kyt-1' }).catch((e: unknown) => e)).toMatchObject({ idempotencyKey: 'kyt-1' })
    expect(await client.getState().catch((e: unknown) => e)).toMatchObject({ status: 409, idempotencyKey: null })
  })
})
