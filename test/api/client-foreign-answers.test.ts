import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxClient, SandboxApiError } from '../../src/client/index.js'
import { createTestApi, listenTestApi, newKey } from '../helpers/api.js'

// A base URL that reaches something other than the API (a web app on the port, a load balancer
// without the path prefix) or a proxy whose server behind it is down: the error said only
// `GET /api/sandbox/state answered 404`, which reads as the API's own 404.

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

async function startServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const messageOf = async (promise: Promise<unknown>) => {
  const error = await promise.catch((e: unknown) => e)
  expect(error).toBeInstanceOf(SandboxApiError)
  expect(error).toMatchObject({ errorCode: null })
  return (error as Error).message
}

describe('an error answer that is not the API\'s own (no error_code)', () => {
  it('a web app\'s 404 page or JSON 401 says the base URL reaches no sandbox, and names it', async () => {
    const app = await startServer((req, res) => {
      if (req.url!.endsWith('/state')) res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Cannot GET /api/sandbox/state</body></html>')
      else res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"Unauthorized"}')
    })
    const client = createSandboxClient({ baseUrl: `${app}/`, apiKey: newKey('foreign') })
    expect(await messageOf(client.getState())).toBe(`GET /api/sandbox/state answered 404: not the sandbox API's JSON (no error_code): is the base URL ${app} the root of a sandbox server (its path prefix included), not a web app or another service?`)
    expect(await messageOf(client.getConfig())).toBe(`GET /api/sandbox/config answered 401: not the sandbox API's JSON (no error_code): is the base URL ${app} the root of a sandbox server (its path prefix included), not a web app or another service?`)
  })

  it('a proxy\'s 502 page, after the retries, says the server behind it did not answer, and how often', async () => {
    const proxy = await startServer((_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>'))
    const client = createSandboxClient({ baseUrl: proxy, retries: 1, maxRetryAfterMs: 0 })
    expect(await messageOf(client.listLoans())).toBe("GET /api/sandbox/loans answered 502: a proxy in front of the server answered 2 times, not the sandbox API's JSON: the server behind it is down, restarting or too slow for the proxy")
    const empty = await startServer((_req, res) => res.writeHead(500).end())
    expect(await messageOf(createSandboxClient({ baseUrl: empty }).getConfig())).toBe("GET /api/sandbox/config answered 500: not the sandbox API's JSON (no error_code): a proxy or load balancer in front of the server answered for it")
  })

  it('the API\'s own errors read as before', async () => {
    const api = await createTestApi()
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
    const client = createSandboxClient({ baseUrl: listener.url, apiKey: newKey('foreign') })
    const error = await client.loanAction('loan_missing', { action: 'add_collateral', amount: 0.01 }).catch((e: unknown) => e)
    expect((error as Error).message).toBe('POST /api/sandbox/loans/loan_missing/action answered 404 LOAN_NOT_FOUND: Loan loan_missing was not found.')
  })
})
