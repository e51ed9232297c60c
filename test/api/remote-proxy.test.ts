import { beforeAll, describe, expect, it } from 'vitest'
import { createSandboxClient, SandboxApiError, SandboxConnectionError } from '../../src/client/index.js'
import { loadScenarios, parseScenario, runScenario, runScenarios, SHIPPED_SCENARIOS_DIR, type Scenario } from '../../src/scenarios/index.js'
import { startWebhookInbox } from '../../src/scenarios/webhook-inbox.js'
import { answerHtml, useProxiedSandbox, type ProxyHandler, type ProxyOptions, type ReverseProxy } from '../helpers/reverse-proxy.js'
import { newKey } from '../helpers/api.js'

// A sandbox deployed elsewhere sits behind a proxy: these put one on 127.0.0.1 in front of an
// in-process sandbox and check what the client and `runScenarios` make of what it does.

const upstreamSandbox = useProxiedSandbox()
let upstream: string
let shipped: Scenario[]

beforeAll(async () => {
  upstream = upstreamSandbox.url
  shipped = await loadScenarios(SHIPPED_SCENARIOS_DIR)
})

const proxy = (handler?: ProxyHandler, options: Omit<ProxyOptions, 'handler'> = {}): Promise<ReverseProxy> => upstreamSandbox.proxy({ handler, ...options })

const pick = (...ids: string[]) => ids.map((id) => shipped.find((scenario) => scenario.id === id)!)
const waits = () => {
  const seen: { reason: string; status?: number; method: string }[] = []
  return { seen, onRetryWait: (wait: { reason: string; status?: number; request: { method: string } }) => { seen.push({ reason: wait.reason, status: wait.status, method: wait.request.method }) } }
}

describe('a sandbox behind a proxy', () => {
  it('walks the flows through latency, jitter, gzip and brotli, chunked answers, Connection: close, and a path prefix with or without a trailing slash', async () => {
    const slow = await proxy((request, response, forward, index) => {
      if (index % 3 === 0) response.setHeader('connection', 'close')
      forward({ delayMs: 50 + ((index * 37) % 250), encoding: index % 2 ? 'gzip' : 'br' })
    }, { stripPrefix: '/sandbox' })
    for (const [baseUrl, ids] of [[`${slow.url}/sandbox`, ['loan-flow', 'dropped-connection-retry']], [`${slow.url}/sandbox/`, ['loan-flow']]] as const) {
      const report = await runScenarios(pick(...ids), { baseUrl })
      expect(report.scenarios.map((scenario) => [scenario.id, scenario.status, scenario.error])).toEqual(ids.map((id) => [id, 'passed', undefined]))
    }
    expect(slow.requests.every((request) => request.path.startsWith('/sandbox/api/sandbox/'))).toBe(true)
  }, 60_000)

  it('retries a proxy\'s 502/503/504 HTML page for GETs and keyed POSTs, waiting a 503\'s Retry-After, and the run passes', async () => {
    const flaky = await proxy((request, response, forward, index) => {
      if (index % 4 === 1) answerHtml(response, [502, 503, 504][index % 3]!, index % 3 === 1 ? { 'retry-after': '1' } : {})
      else forward()
    })
    const { seen, onRetryWait } = waits()
    const report = await runScenarios(pick('loan-flow'), { baseUrl: flaky.url, transport: { onRetryWait } })
    expect(report.scenarios[0]).toMatchObject({ status: 'passed' })
    expect(seen.length).toBeGreaterThanOrEqual(2)
    expect(seen.every((wait) => wait.reason === 'gateway_error' && [502, 503, 504].includes(wait.status!))).toBe(true)
    expect(new Set(seen.map((wait) => wait.method))).toEqual(new Set(['GET', 'POST']))
  }, 30_000)

  it('never sends a POST without an Idempotency-Key twice: not after a proxy\'s 502, not after a dropped connection', async () => {
    const gateway = await proxy((_request, response) => answerHtml(response, 502))
    const client = createSandboxClient({ baseUrl: gateway.url, apiKey: newKey('remote') })
    const answer = await client.request({ method: 'POST', path: '/api/sandbox/loans', body: { collateral_btc: 0.5, loan_amount: 1000 }, idempotencyKey: null })
    expect([answer.status, answer.attempts, gateway.requests.length]).toEqual([502, 1, 1])

    const dropping = await proxy((request) => request.socket.destroy())
    const dropped = createSandboxClient({ baseUrl: dropping.url, apiKey: newKey('remote') })
    const error = await dropped.request({ method: 'POST', path: '/api/sandbox/loans', body: { collateral_btc: 0.5, loan_amount: 1000 }, idempotencyKey: null }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SandboxConnectionError)
    expect((error as Error).message).toContain('a POST without an Idempotency-Key is not sent again')
    expect(dropping.requests).toHaveLength(1)
    // With a key it is safe, and retried.
    await dropped.request({ method: 'POST', path: '/api/sandbox/loans', body: {}, idempotencyKey: 'k-1' }).catch(() => {})
    expect(dropping.requests).toHaveLength(5)
  })

  it('stops the run, as for a server that cannot be reached, when the proxy answers 503 every time', async () => {
    const down = await proxy((_request, response) => answerHtml(response, 503))
    const report = await runScenarios(pick('loan-flow', 'repay-full'), { baseUrl: down.url })
    expect(report.scenarios[0]).toMatchObject({ status: 'failed', connection_error: true })
    expect(report.scenarios[0]!.error).toBe("GET /api/sandbox/state: a proxy in front of the server answered 503 4 times, not the sandbox's own JSON: the server behind it is down, restarting or too slow for the proxy")
    expect(report.scenarios[1]).toMatchObject({ status: 'skipped', error: 'not run: the run stopped when loan-flow could not reach the server' })
  }, 30_000)

  it('does not follow a redirect: a POST is not sent again as a GET, and the report names the URL to use', async () => {
    const moved = await proxy((request, response) => {
      response.writeHead(301, { location: `${upstream}${request.url}` })
      response.end()
    })
    const key = newKey('remote')
    const client = createSandboxClient({ baseUrl: moved.url, apiKey: key })
    const error = await client.createLoan({ collateral_btc: 0.5, loan_amount: 1000 }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SandboxApiError)
    expect((error as SandboxApiError).message).toBe(`POST /api/sandbox/loans answered 301: a redirect to ${upstream}/api/sandbox/loans (not followed; use the URL it names as the base URL)`)
    expect((await createSandboxClient({ baseUrl: upstream, apiKey: key }).listLoans()).activeLoans).toEqual([])

    const report = await runScenarios(pick('loan-flow', 'repay-full'), { baseUrl: moved.url })
    expect(report.scenarios[0]).toMatchObject({ status: 'failed', connection_error: true })
    expect(report.scenarios[0]!.error).toBe(`the server answered 301, a redirect to ${upstream}/api/sandbox/state: redirects are not followed (a POST would come back as a GET, and the key is not sent to another origin); use --base-url ${upstream}`)
    expect(report.scenarios[1]!.status).toBe('skipped')
  })

  it('does not follow a 301 within the same origin either: fetch would send the POST again as a GET and take its 200 for the POST\'s', async () => {
    const key = newKey('remote')
    let self = ''
    const renamed = await proxy((request, response, forward) => {
      if (!request.url!.startsWith('/old/')) return forward()
      response.writeHead(301, { location: `${self}${request.url!.slice(4)}` })
      response.end()
    })
    self = renamed.url
    const same = createSandboxClient({ baseUrl: `${renamed.url}/old`, apiKey: key })
    await expect(same.createLoan({ collateral_btc: 0.5, loan_amount: 1000 })).rejects.toMatchObject({ status: 301 })
    expect(renamed.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['POST /old/api/sandbox/loans'])
  })

  it('gives up at once on an https server whose certificate is not trusted, and says how to trust it', async () => {
    const tls = await proxy(undefined, { tls: true })
    const { seen, onRetryWait } = waits()
    const report = await runScenarios(pick('loan-flow'), { baseUrl: tls.url, transport: { onRetryWait } })
    expect(seen).toEqual([])
    expect(report.scenarios[0]).toMatchObject({ status: 'failed', connection_error: true })
    expect(report.scenarios[0]!.error).toBe(`cannot reach ${tls.url}/api/sandbox/state (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate); its TLS certificate is not trusted here: give its CA with NODE_EXTRA_CA_CERTS=ca.pem`)
  })

  it('times out a drop_answer step on a server that never answers, instead of waiting forever', async () => {
    const silent = await proxy(() => {})
    const scenario = parseScenario('drop.json', JSON.stringify({ name: 'drop', description: 'd', steps: [
      { request: { method: 'POST', path: '/api/sandbox/loans', body: { collateral_btc: 0.5, loan_amount: 1000 }, drop_answer: true } },
      { replay: true },
    ] }))
    // Waiting forever would outlast the test; the error names the timeout that ended it.
    const report = await runScenarios([scenario], { baseUrl: silent.url, transport: { timeoutMs: 300 } })
    expect(report.scenarios[0]).toMatchObject({ status: 'failed', connection_error: true, error: `cannot reach ${silent.url}/api/sandbox/loans (timed out after 1 attempt of 0.3 s each)` })
  })
})

describe('notes for a sandbox on another machine', () => {
  it('says the runner\'s receiver cannot be reached from there, not to start serve --allow-local-webhooks', async () => {
    const remote = await proxy()
    const inbox = startWebhookInbox()
    try {
      const context = { baseUrl: remote.url, remote: true, getInbox: () => inbox }
      const refused = await runScenario(pick('webhook-test-event')[0]!, context)
      expect(refused.steps.at(-1)!.error_code).toBe('WEBHOOK_URL_INVALID')
      expect(refused.steps.at(-1)!.note).toMatch(/^the runner's receiver listens on 127\.0\.0\.1 of this machine, which a sandbox on another machine cannot reach/)
      // The remote server refuses the receiver's URL (400, expected here), and the wait then gets nothing.
      const register = { request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } }, expect: { status: 400 } }
      const waiting = parseScenario('wait.json', JSON.stringify({ name: 'w', description: 'd', steps: [register, { wait_for_webhook: { type: 'sandbox.webhook.test', timeout_ms: 50 } }] }))
      const report = await runScenario(waiting, context)
      expect(report.steps[1]!.failures[0]!.message).toBe('no delivery of sandbox.webhook.test within 50 ms')
      expect(report.steps[1]!.note).toMatch(/^the runner's receiver listens on 127\.0\.0\.1 of this machine/)
    } finally {
      await (await inbox).close()
    }
  })

  it('says a refused --api-key comes from the partner dashboard, not from sandbox keys', async () => {
    // The hosted sandbox knows none of the keys made here.
    const remote = await proxy((_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ request_id: 'req_1', error_code: 'SANDBOX_API_KEY_INVALID', error: 'The API key is invalid.' }))
    })
    const report = await runScenario(pick('loan-flow')[0]!, { baseUrl: remote.url, apiKey: newKey('local'), remote: true, getInbox: () => startWebhookInbox() })
    expect(report.key_refused).toBe(true)
    expect(report.steps[0]!.note).toBe('the server refuses the run\'s --api-key (401 SANDBOX_API_KEY_INVALID: The API key is invalid.): use a key this server issued (for the hosted sandbox, from the partner dashboard; a key of another environment, or one made by `sandbox keys create` for a local server, is refused)')
  })
})
