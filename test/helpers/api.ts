import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler, type H3 } from 'h3'
import { assertAnswerKeepsContract } from './contract.js'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox, SandboxOptions } from '../../src/server/sandbox-types.js'

/** A well-formed open-mode key, unique per call so tests never share state by accident. */
export function newKey(label = 'test'): string {
  return `sk_sandbox_${label}_${randomUUID().replaceAll('-', '')}`
}

/** What a test sees of an answer. */
export interface ApiAnswer {
  status: number
  headers: Headers
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
}

export interface CallOptions {
  key?: string | null
  body?: unknown
  rawBody?: string
  idempotencyKey?: string | null
  headers?: Record<string, string>
}

/** A sandbox driven in-process through its fetch handler. */
export interface TestApi {
  sandbox: Sandbox
  key: string
  call(method: string, path: string, options?: CallOptions): Promise<ApiAnswer>
  get(path: string, key?: string): Promise<ApiAnswer>
  post(path: string, body?: unknown, options?: CallOptions): Promise<ApiAnswer>
}

/** Builds the Request the way a partner's client would send it. */
export function buildRequest(base: string, method: string, path: string, options: CallOptions, defaultKey: string): Request {
  const headers: Record<string, string> = { ...options.headers }
  const key = options.key === undefined ? defaultKey : options.key
  if (key !== null) headers.authorization = `Bearer ${key}`
  let body: string | undefined
  if (options.rawBody !== undefined) body = options.rawBody
  else if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined) headers['content-type'] ??= 'application/json'
  if (method === 'POST') {
    const idem = options.idempotencyKey === undefined ? randomUUID() : options.idempotencyKey
    if (idem !== null) headers['idempotency-key'] = idem
  }
  return new Request(`${base}${path}`, { method, headers, body })
}

async function toAnswer(request: Request, response: Response): Promise<ApiAnswer> {
  const text = await response.text()
  // Every answer an API test sees must keep the OpenAPI contract, or the test fails here.
  assertAnswerKeepsContract(request.method, request.url, response.status, response.headers, text)
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
}

/** Starts an in-process sandbox (memory storage, rate limit off unless asked). */
export async function createTestApi(options: SandboxOptions = {}): Promise<TestApi> {
  const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {}, ...options })
  const key = newKey()
  const call = async (method: string, path: string, callOptions: CallOptions = {}) => {
    const request = buildRequest('http://sandbox.test', method, path, callOptions, key)
    return toAnswer(request, await sandbox.fetch(request))
  }
  return {
    sandbox,
    key,
    call,
    get: (path, otherKey) => call('GET', path, otherKey === undefined ? {} : { key: otherKey }),
    post: (path, body, callOptions = {}) => call('POST', path, { ...callOptions, body }),
  }
}

/** The same sandbox behind a real HTTP port on 127.0.0.1 (port 0). */
export async function listenTestApi(sandbox: Sandbox): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer(toNodeHandler(sandbox.app as H3))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

/** Request bodies of a typical loan, used across tests. */
export const LOAN = { collateral_btc: 0.5, loan_amount: 20000, loan_currency: 'USDT' } as const

/** Walks the 4-step loan flow and returns the issued loan id. */
export async function issueLoan(api: TestApi, key = api.key, body: Record<string, unknown> = LOAN): Promise<string> {
  const steps: Array<Record<string, unknown>> = [
    { action: 'start_collateral_transfer', ...body },
    { action: 'confirm_btc', tx_hash: `tx_${randomUUID()}`, confirmations: 6 },
    { action: 'run_kyt' },
    { action: 'complete_payout' },
  ]
  let last: ApiAnswer | undefined
  for (const step of steps) {
    last = await api.post('/api/sandbox/loans/flow', step, { key })
    if (last.status !== 200) throw new Error(`${String(step.action)} answered ${last.status}: ${JSON.stringify(last.body)}`)
  }
  const loans = last!.body.activeLoans as Array<{ id: string }>
  return loans[loans.length - 1]!.id
}
