import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxClient, SandboxApiError, SandboxConnectionError, SandboxRequestError, sendRequest } from '../../src/client/index.js'
import { createTestApi, listenTestApi, newKey } from '../helpers/api.js'

/**
 * How long the client waits for an attempt the scripted server never answers: short, yet long
 * enough that the attempts it does answer are not cut off on a loaded machine (200 ms was, once).
 */
const LOST_ATTEMPT_TIMEOUT_MS = 1000

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

async function startSandboxUrl(): Promise<string> {
  const api = await createTestApi()
  const listener = await listenTestApi(api.sandbox)
  cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
  return listener.url
}

interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: string }

/** A scripted server on 127.0.0.1: answers the n-th request with handlers[n]. */
async function startScripted(handlers: Array<(req: IncomingMessage, res: ServerResponse) => void>): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => { body += chunk })
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
      handlers[Math.min(seen.length - 1, handlers.length - 1)]!(req, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
}

describe('createSandboxClient against the sandbox', () => {
  it('walks a loan with typed answers and bearer auth', async () => {
    const client = createSandboxClient({ baseUrl: await startSandboxUrl(), apiKey: newKey('client') })
    const config = await client.getConfig()
    expect(config.rates.btc_usd).toBeGreaterThan(0)
    const started = await client.loanFlow({ action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000 })
    expect(started.draft?.status).toBe('awaiting_collateral')
    await client.loanFlow({ action: 'confirm_btc', tx_hash: 'tx', confirmations: 6 })
    await client.loanFlow({ action: 'run_kyt' })
    const issued = await client.loanFlow({ action: 'complete_payout' })
    const loan = issued.activeLoans[0]!
    expect(loan.status).toBe('active')
    const repaid = await client.loanAction(loan.id, { action: 'repay_interest', amount: 10 })
    expect(repaid.activeLoans[0]!.interestDue).toBe(loan.interestDue - 10)
    const state = await client.getState()
    expect(state.loans.activeLoans[0]!.id).toBe(loan.id)
  })

  it('refuses at once a base URL the paths cannot follow: the API\'s own prefix at its end, a space, a query or fragment, a scheme not http(s)', async () => {
    const root = await startSandboxUrl()
    // Every call asked for /api/sandbox/api/sandbox/... and was a 404, or failed as "Invalid URL".
    expect(() => createSandboxClient({ baseUrl: `${root}/api/sandbox/`, apiKey: newKey('client') })).toThrow(new TypeError(`baseUrl "${root}/api/sandbox/" ends in /api/sandbox, which every path of the API starts with (GET state would ask for /api/sandbox/api/sandbox/state): give the server's root, ${root}`))
    expect(() => createSandboxClient({ baseUrl: `${root} `, apiKey: newKey('client') })).toThrow(`baseUrl "${root} " is not a URL: it holds a space or a line break (check its quotes)`)
    // The paths went after a query or fragment: every call asked for / and was a 404.
    for (const [tail, shown] of [['?x=1', '?x=1'], ['#frag', '#frag'], ['/?', '?']]) {
      expect(() => createSandboxClient({ baseUrl: `${root}${tail}`, apiKey: newKey('client') }), tail).toThrow(new TypeError(`baseUrl "${root}${tail}" must not have a query or fragment (${shown}): the API's paths would go after it, so every request would ask for / itself: give the server's root, ${root}`))
    }
    expect(() => createSandboxClient({ baseUrl: `${root}?x=1`, apiKey: newKey('client') })).toThrow(TypeError)
    // Any other scheme was a network error retried 4 times, "(unknown scheme)".
    expect(() => createSandboxClient({ baseUrl: root.replace(/^http:/, 'ftp:'), apiKey: newKey('client') })).toThrow(new TypeError(`baseUrl "${root.replace(/^http:/, 'ftp:')}" is not an http(s) URL: the API answers http: and https: only, not ftp: (give the server's root, as http://HOST:PORT)`))
    // Shown masked, as every message shows a base URL: the password never reaches a log.
    const withPassword = root.replace('http://', 'http://user:hunter2@')
    expect(() => createSandboxClient({ baseUrl: withPassword, apiKey: newKey('client') })).toThrow(new TypeError(`baseUrl "${root.replace('http://', 'http://****@')}" cannot hold a user name or password: fetch sends none; the API takes its key from apiKey`))
    // A path prefix of a proxy is a root like any other.
    expect(() => createSandboxClient({ baseUrl: `${root}/gateway`, apiKey: newKey('client') })).not.toThrow()
    expect((await createSandboxClient({ baseUrl: `${root}/`, apiKey: newKey('client') }).getConfig()).rates.btc_usd).toBeGreaterThan(0)
  })

  it('refuses at once a base URL that is not set (process.env.SANDBOX_BASE_URL without its globalSetup)', () => {
    // It crashed with "Cannot read properties of undefined (reading 'replace')".
    for (const baseUrl of [undefined, null]) {
      expect(() => createSandboxClient({ baseUrl: baseUrl as unknown as string, apiKey: newKey('client') }), String(baseUrl))
        .toThrow(new TypeError(`baseUrl is ${baseUrl}: give the server's root, as http://HOST:PORT (from an environment variable that is not set?)`))
    }
  })

  it('refuses at once a retries, timeoutMs or maxRetryAfterMs that would misbehave (a NaN timeout timed out every request as an unreachable server)', async () => {
    const baseUrl = 'http://127.0.0.1:4010'
    const refusals: Array<[object, string]> = [
      [{ timeoutMs: Number.NaN }, 'timeoutMs NaN: expected milliseconds, a whole number from 1'],
      [{ timeoutMs: 0 }, 'timeoutMs 0: expected milliseconds, a whole number from 1'],
      [{ retries: -1 }, 'retries -1: expected a whole number from 0 to 100'],
      [{ retries: 1.5 }, 'retries 1.5: expected a whole number from 0 to 100'],
      [{ maxRetryAfterMs: -5 }, 'maxRetryAfterMs -5: expected milliseconds, a whole number from 0'],
    ]
    for (const [numbers, message] of refusals) {
      expect(() => createSandboxClient({ baseUrl, apiKey: newKey('client'), ...numbers }), message).toThrow(new TypeError(message))
      await expect(sendRequest({ baseUrl, ...numbers }, { method: 'GET', path: '/api/sandbox/config' }), message).rejects.toThrow(new TypeError(message))
    }
    expect(() => createSandboxClient({ baseUrl, retries: 0, timeoutMs: 1, maxRetryAfterMs: 0 })).not.toThrow()
  })

  it('rejects a non-2xx answer with status, error_code and request_id', async () => {
    const client = createSandboxClient({ baseUrl: await startSandboxUrl(), apiKey: newKey('client') })
    const error = await client.loanFlow({ action: 'run_kyt' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SandboxApiError)
    expect(error).toMatchObject({ status: 409, errorCode: 'FLOW_CONFLICT', requestId: expect.stringMatching(/^req_/) })
    expect((error as Error).message).toMatch(/^POST \/api\/sandbox\/loans\/flow answered 409 FLOW_CONFLICT: /)
    // details and the replay flag are fields, as a partner branches on them (README: recovery after a 409).
    expect(error).toMatchObject({ details: { reason: 'STEP_OUT_OF_ORDER' }, idempotencyReplayed: false })
    const unauthenticated = createSandboxClient({ baseUrl: await startSandboxUrl() })
    await expect(unauthenticated.getState()).rejects.toMatchObject({ status: 401, errorCode: 'SANDBOX_API_KEY_REQUIRED' })
  })

  it('types the partner and webhook answers as the server sends them', async () => {
    const client = createSandboxClient({ baseUrl: await startSandboxUrl(), apiKey: newKey('client') })
    const partner = await client.updatePartner({ name: 'Acme' })
    const name: string = partner.profile.name
    expect([name, partner.idempotency_replayed]).toEqual(['Acme', false])
    const state = await client.getState()
    expect(state.partner.profile.name).toBe('Acme')
    const hooks = await client.getWebhook()
    // No endpoint yet: the type says it can be null, so this line must narrow first.
    // @ts-expect-error endpoint is null until one is registered
    expect(() => hooks.endpoint.url).toThrow(TypeError)
    expect(hooks.deliveries).toEqual([])
    // @ts-expect-error the url is a string, not any value the server's schema lets through
    await expect(client.setWebhook({ url: 42 })).rejects.toMatchObject({ status: 400, errorCode: 'WEBHOOK_URL_INVALID' })
  })

  it('sends a caller-chosen Idempotency-Key so a repeat is a replay', async () => {
    const client = createSandboxClient({ baseUrl: await startSandboxUrl(), apiKey: newKey('client') })
    const body = { collateral_btc: 0.5, loan_amount: 20000 }
    const first = await client.createLoan(body, { idempotencyKey: 'order-42' })
    const again = await client.createLoan(body, { idempotencyKey: 'order-42' })
    expect(first.idempotency_replayed).toBe(false)
    expect(again.idempotency_replayed).toBe(true)
    expect(again.activeLoans).toEqual(first.activeLoans)
  })
})

describe('client retries', () => {
  it('retries a 429 after Retry-After with the same Idempotency-Key and body', async () => {
    const { url, seen } = await startScripted([
      json(429, { request_id: 'req_1', error_code: 'SANDBOX_RATE_LIMIT_EXCEEDED' }, { 'retry-after': '1' }),
      json(200, { request_id: 'req_2', wallet: {} }),
    ])
    const client = createSandboxClient({ baseUrl: url, apiKey: 'sk_sandbox_retry_0000000000000000' })
    const started = Date.now()
    const answer = await client.request({ method: 'POST', path: '/api/sandbox/loans', body: { loan_amount: 100 } })
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    expect(answer).toMatchObject({ status: 200, attempts: 2, requestId: 'req_2' })
    expect(seen).toHaveLength(2)
    expect(seen[1]!.headers['idempotency-key']).toBe(seen[0]!.headers['idempotency-key'])
    expect(seen[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/)
    expect(seen[1]!.body).toBe(seen[0]!.body)
    expect(seen[1]!.headers.authorization).toBe('Bearer sk_sandbox_retry_0000000000000000')
  })

  it('uses an Idempotency-Key or Authorization given in headers, in any case, instead of adding its own', async () => {
    const { url, seen } = await startScripted([json(200, { request_id: 'req_1', wallet: {} })])
    const client = createSandboxClient({ baseUrl: url, apiKey: 'sk_sandbox_client_000000000000000' })
    const answer = await client.request({ method: 'POST', path: '/api/sandbox/loans', body: {}, headers: { 'Idempotency-Key': 'mine-1', AUTHORIZATION: 'Bearer sk_sandbox_header_00000000000000' } })
    expect(answer.idempotencyKey).toBe('mine-1')
    expect(seen[0]!.headers['idempotency-key']).toBe('mine-1')
    expect(seen[0]!.headers.authorization).toBe('Bearer sk_sandbox_header_00000000000000')
  })

  it('retries a dropped connection with the same key and body', async () => {
    const { url, seen } = await startScripted([
      (req) => req.socket.destroy(),
      json(200, { request_id: 'req_ok' }),
    ])
    const client = createSandboxClient({ baseUrl: url, apiKey: 'sk_sandbox_retry_0000000000000000' })
    const answer = await client.createLoan({ collateral_btc: 1, loan_amount: 100, loan_currency: 'USDT' }, { idempotencyKey: 'drop-1' })
    expect(answer.request_id).toBe('req_ok')
    expect(seen.map((item) => item.headers['idempotency-key'])).toEqual(['drop-1', 'drop-1'])
    expect(seen[1]!.body).toBe(seen[0]!.body)
  })

  it('after a lost answer, waits out the IDEMPOTENCY_KEY_IN_PROGRESS of its own attempt and gets the result', async () => {
    const inProgress = json(409, { request_id: 'req_2', error_code: 'IDEMPOTENCY_KEY_IN_PROGRESS' })
    const { url, seen } = await startScripted([
      () => {}, // never answers: the client times out
      inProgress,
      json(200, { request_id: 'req_3', idempotency_replayed: true }),
    ])
    const waits: string[] = []
    const client = createSandboxClient({ baseUrl: url, timeoutMs: LOST_ATTEMPT_TIMEOUT_MS, onRetryWait: ({ reason }) => waits.push(reason) })
    const answer = await client.createLoan({ collateral_btc: 1, loan_amount: 100 }, { idempotencyKey: 'slow-1' })
    expect(answer).toMatchObject({ request_id: 'req_3', idempotency_replayed: true })
    expect(waits).toEqual(['network_error', 'in_progress'])
    expect(seen.map((item) => item.headers['idempotency-key'])).toEqual(['slow-1', 'slow-1', 'slow-1'])

    // Without a lost attempt of its own, IN_PROGRESS is another caller's request: the answer.
    const other = await startScripted([inProgress])
    const error = await createSandboxClient({ baseUrl: other.url }).createLoan({ collateral_btc: 1, loan_amount: 100 }).catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 409, errorCode: 'IDEMPOTENCY_KEY_IN_PROGRESS' })
    expect(other.seen).toHaveLength(1)
  })

  it('waits 500 ms, then 1 s, before retrying its own attempt still IN_PROGRESS, as the README says', async () => {
    const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8').replace(/\s+/g, ' ')
    expect(readme.includes('so it is retried too, after 500 ms, then 1 s and so on (at most 2 s)'), 'README "Retries" states these waits').toBe(true)
    const inProgress = json(409, { request_id: 'req_2', error_code: 'IDEMPOTENCY_KEY_IN_PROGRESS' })
    const { url } = await startScripted([() => {}, inProgress, inProgress, json(200, { request_id: 'req_4', idempotency_replayed: true })])
    const waits: Array<[string, number]> = []
    const client = createSandboxClient({ baseUrl: url, timeoutMs: LOST_ATTEMPT_TIMEOUT_MS, onRetryWait: ({ reason, ms }) => waits.push([reason, ms]) })
    await client.createLoan({ collateral_btc: 1, loan_amount: 100 }, { idempotencyKey: 'slow-2' })
    expect(waits).toEqual([['network_error', 100], ['in_progress', 500], ['in_progress', 1000]])
  })

  it('gives up with a connection error naming the cause when nothing answers', async () => {
    const { url } = await startScripted([(req) => req.socket.destroy()])
    const client = createSandboxClient({ baseUrl: url, retries: 1 })
    const error = await client.getConfig().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SandboxConnectionError)
    expect((error as Error).message).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/sandbox\/config \(.+\) after 2 attempts$/)
  })

  it('gives up on an answer whose body stops coming as on one that never starts: timeoutMs per attempt, then a connection error', async () => {
    // The status line and headers, then a few bytes of the 100 promised, then nothing.
    const { url, seen } = await startScripted([(_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
      res.write('{"request_id":')
    }])
    const waits: string[] = []
    const client = createSandboxClient({ baseUrl: url, timeoutMs: 200, retries: 1, onRetryWait: ({ reason }) => waits.push(reason) })
    const error = await client.getConfig().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SandboxConnectionError)
    expect((error as Error).message).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/sandbox\/config \(timed out after 2 attempts of 0\.2 s each\)$/)
    expect(waits).toEqual(['network_error'])
    expect(seen).toHaveLength(2)
  })

  it('takes one signal for many requests at once: each is sent and retried, with no warning of a listener leak from Node', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`)
    process.on('warning', onWarning)
    cleanups.push(async () => { process.off('warning', onWarning) })
    // Each of the 12 first attempts loses its connection, so all 12 wait for a retry at once too.
    const { url, seen } = await startScripted([...Array.from({ length: 12 }, () => (req: IncomingMessage) => req.socket.destroy()), json(200, { request_id: 'req_ok' })])
    const client = createSandboxClient({ baseUrl: url, signal: new AbortController().signal })
    const answers = await Promise.all(Array.from({ length: 12 }, () => client.getConfig()))
    expect(answers.map((answer) => answer.request_id)).toEqual(Array.from({ length: 12 }, () => 'req_ok'))
    expect(seen).toHaveLength(24)
    // Node tells of a warning on the next tick.
    await new Promise((resolve) => setImmediate(resolve))
    expect(warnings).toEqual([])
  })

  it('keeps a base URL path prefix', async () => {
    const { url, seen } = await startScripted([json(200, { request_id: 'req_1' })])
    await createSandboxClient({ baseUrl: `${url}/prefix/` }).getConfig()
    expect(seen[0]!.url).toBe('/prefix/api/sandbox/config')
  })

  it('sends no Idempotency-Key for null, an empty one for "", and refuses one a header cannot carry without sending anything', async () => {
    const server = await startScripted([json(400, { request_id: 'req_1', error_code: 'IDEMPOTENCY_KEY_REQUIRED', error: 'x' })])
    const client = createSandboxClient({ baseUrl: server.url, apiKey: newKey() })
    await client.request({ method: 'POST', path: '/api/sandbox/loans', body: {}, idempotencyKey: null })
    await client.request({ method: 'POST', path: '/api/sandbox/loans', body: {}, idempotencyKey: '' })
    expect(server.seen.map((seen) => seen.headers['idempotency-key'])).toEqual([undefined, ''])
    const refused = client.request({ method: 'POST', path: '/api/sandbox/loans', body: {}, idempotencyKey: 'ключ' })
    await expect(refused).rejects.toBeInstanceOf(SandboxRequestError)
    await expect(refused).rejects.toThrow('the idempotency-key header cannot carry "ключ": U+043A')
    expect(server.seen).toHaveLength(2)
  })
})
