import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { SandboxOptions } from '../../src/server/sandbox-types.js'
import { listenSandbox } from '../../src/server/listen.js'
import type { RequestLogEntry } from '../../src/server/request-log.js'
import type { FaultsConfig } from '../../src/faults/faults-schema.js'
import { loadScenarios, SHIPPED_SCENARIOS_DIR } from '../../src/scenarios/load-scenarios.js'
import { runScenarios } from '../../src/scenarios/run-scenarios.js'
import { LOAN, newKey } from '../helpers/api.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/** A sandbox with `faults` on a real port (127.0.0.1, port 0), and the request log entries it made. */
async function serveWithFaults(faults: FaultsConfig | undefined, options: SandboxOptions = {}) {
  const logged: RequestLogEntry[] = []
  const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {}, faults, onRequest: (entry) => logged.push(entry), ...options })
  const listener = await listenSandbox(sandbox)
  cleanups.push(async () => {
    await listener.close()
    await sandbox.close()
  })
  const key = newKey('faults')
  const send = (method: string, path: string, body?: unknown, idempotencyKey = randomUUID(), signal?: AbortSignal) => fetch(`${listener.url}${path}`, {
    method,
    signal,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': idempotencyKey }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const readLoans = async () => ((await (await send('GET', '/api/sandbox/state')).json()) as { loans: { activeLoans: unknown[]; loanHistory: unknown[] } }).loans
  const activeLoans = async () => (await readLoans()).activeLoans
  /** Every loan the key ever had: active and closed. */
  const allLoans = async () => {
    const loans = await readLoans()
    return [...loans.activeLoans, ...loans.loanHistory]
  }
  return { sandbox, listener, key, send, activeLoans, allLoans, logged }
}

describe('fault injection (serve --faults)', () => {
  it('drop_after executes and stores a POST, then cuts the connection: the retry with the same key gets the replay, and one loan exists', async () => {
    const { send, activeLoans, logged } = await serveWithFaults({ rules: [{ method: 'POST', path: '/api/sandbox/loans', fault: 'drop_after', first_attempt: true }] })
    const idem = randomUUID()
    await expect(send('POST', '/api/sandbox/loans', LOAN, idem)).rejects.toThrow(/fetch failed/)
    const retry = await send('POST', '/api/sandbox/loans', LOAN, idem)
    expect(retry.status).toBe(200)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(await retry.json()).toMatchObject({ idempotency_replayed: true })
    expect(await activeLoans()).toHaveLength(1)
    expect(logged.filter((entry) => entry.method === 'POST').map((entry) => [entry.status, entry.fault])).toEqual([[200, 'drop_after'], [200, undefined]])
  })

  it('drop_before cuts the connection without executing anything', async () => {
    const { send, activeLoans, logged } = await serveWithFaults({ rules: [{ method: 'POST', fault: 'drop_before' }] })
    await expect(send('POST', '/api/sandbox/loans', LOAN)).rejects.toThrow(/fetch failed/)
    expect(await activeLoans()).toHaveLength(0)
    expect(logged[0]).toMatchObject({ method: 'POST', status: 0, fault: 'drop_before' })
  })

  it('a 503 executes nothing and stores nothing under the key: the same key then executes', async () => {
    const { send, activeLoans, logged } = await serveWithFaults({ rules: [{ path: '/api/sandbox/*', fault: 'status', status: 503, retry_after: 2, first_attempt: true }] })
    const idem = randomUUID()
    const failed = await send('POST', '/api/sandbox/loans', LOAN, idem)
    expect(failed.status).toBe(503)
    expect(failed.headers.get('retry-after')).toBe('2')
    const body = await failed.json() as Record<string, unknown>
    expect(body).toMatchObject({ error_code: 'SANDBOX_FAULT_INJECTED' })
    expect(failed.headers.get('x-request-id')).toBe(body.request_id)
    expect(await activeLoans()).toHaveLength(0)
    const retry = await send('POST', '/api/sandbox/loans', LOAN, idem)
    expect(retry.status).toBe(200)
    expect(await retry.json()).toMatchObject({ idempotency_replayed: false })
    expect(await activeLoans()).toHaveLength(1)
    expect(logged[0]).toMatchObject({ status: 503, error_code: 'SANDBOX_FAULT_INJECTED', fault: 'status 503' })
  })

  it('a 429 is the rate limit\'s own answer: its code, Retry-After and the RateLimit headers with nothing remaining', async () => {
    const { send } = await serveWithFaults({ rules: [{ method: 'GET', fault: 'status', status: 429, retry_after: 3 }] }, { rateLimit: { limit: 50, windowSeconds: 60 } })
    const limited = await send('GET', '/api/sandbox/state')
    expect(limited.status).toBe(429)
    expect(Object.fromEntries(['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].map((name) => [name, limited.headers.get(name)])))
      .toEqual({ 'retry-after': '3', 'ratelimit-limit': '50', 'ratelimit-remaining': '0', 'ratelimit-reset': '3' })
    expect(await limited.json()).toMatchObject({ error_code: 'SANDBOX_RATE_LIMIT_EXCEEDED', details: { limit: 50, window_seconds: 60, retry_after_seconds: 3 } })
  })

  it('an injected 500, 503 or 429 on a GET or DELETE, which take no Idempotency-Key, says to send the request again, not to reuse a key', async () => {
    const { send } = await serveWithFaults({
      rules: [
        { method: 'GET', path: '/api/sandbox/state', fault: 'status', status: 503 },
        { method: 'GET', path: '/api/sandbox/config', fault: 'status', status: 429, retry_after: 2 },
        { method: 'DELETE', fault: 'status', status: 500 },
        { method: 'POST', fault: 'status', status: 503 },
      ],
    })
    const messageOf = async (answer: Promise<Response>) => ((await (await answer).json()) as { error: string }).error
    expect(await messageOf(send('GET', '/api/sandbox/state'))).toBe('A 503 injected by the sandbox\'s fault injection (serve --faults); nothing was executed: send the request again.')
    expect(await messageOf(send('GET', '/api/sandbox/config'))).toBe('Rate limited by the sandbox\'s fault injection (serve --faults); retry after 2 s.')
    expect(await messageOf(send('DELETE', '/api/sandbox/webhooks'))).toBe('A 500 injected by the sandbox\'s fault injection (serve --faults); nothing was executed: send the request again.')
    // A POST's retry must carry the key of its first try, or it is another operation.
    expect(await messageOf(send('POST', '/api/sandbox/loans', LOAN))).toBe('A 503 injected by the sandbox\'s fault injection (serve --faults); nothing was executed: retry with the same Idempotency-Key.')
  })

  it('a 429 with --rate-limit off shows no window: Retry-After as the rule gives it, no RateLimit headers and no limit in details', async () => {
    // It showed the default 120/60 window, which no answer of this server has when the limit is off.
    const { send } = await serveWithFaults({ rules: [{ method: 'GET', fault: 'status', status: 429, retry_after: 7 }] })
    const limited = await send('GET', '/api/sandbox/config')
    expect(limited.status).toBe(429)
    expect(Object.fromEntries(['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].map((name) => [name, limited.headers.get(name)])))
      .toEqual({ 'retry-after': '7', 'ratelimit-limit': null, 'ratelimit-remaining': null, 'ratelimit-reset': null })
    const body = await limited.json() as Record<string, unknown>
    expect(body).toMatchObject({ error_code: 'SANDBOX_RATE_LIMIT_EXCEEDED', details: { retry_after_seconds: 7 } })
    expect(body.details).toEqual({ retry_after_seconds: 7 })
  })

  it('a 502 or 504 is a proxy\'s HTML page, without the API\'s error_code', async () => {
    const { send } = await serveWithFaults({ rules: [{ fault: 'status', status: 504 }] })
    const answer = await send('GET', '/api/sandbox/config')
    expect(answer.status).toBe(504)
    expect(answer.headers.get('content-type')).toBe('text/html')
    expect(await answer.text()).toContain('504 Gateway Timeout')
  })

  it('latency answers late and still executes the request', async () => {
    const { send, activeLoans } = await serveWithFaults({ rules: [{ method: 'POST', fault: 'latency', ms: 300 }] })
    const started = performance.now()
    const answer = await send('POST', '/api/sandbox/loans', LOAN)
    expect(performance.now() - started).toBeGreaterThanOrEqual(290)
    expect(answer.status).toBe(200)
    expect(await activeLoans()).toHaveLength(1)
  })

  it('latency delays the answer of a request that has executed: a client that times out and retries at once with the same key gets the replay', async () => {
    // The first attempt's answer is 3 s late; the client gives up after 100 ms and sends it again.
    const { send, activeLoans, logged } = await serveWithFaults({ rules: [{ method: 'POST', path: '/api/sandbox/loans', fault: 'latency', ms: 3000, first_attempt: true }] })
    const idem = randomUUID()
    await expect(send('POST', '/api/sandbox/loans', LOAN, idem, AbortSignal.timeout(100))).rejects.toThrow()
    const retry = await send('POST', '/api/sandbox/loans', LOAN, idem)
    expect(retry.status).toBe(200)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(await retry.json()).toMatchObject({ idempotency_replayed: true })
    expect(await activeLoans()).toHaveLength(1)
    // The retry's line is there now; the first attempt's comes once its late answer is written.
    expect(logged.filter((entry) => entry.method === 'POST').map((entry) => [entry.status, entry.fault])).toEqual([[200, undefined]])
  })

  it('never faults the OpenAPI document, nor a request no rule matches (another key\'s rule)', async () => {
    const { send, logged } = await serveWithFaults({ rules: [{ path: '/api/sandbox/openapi.json', fault: 'drop_before' }, { fault: 'status', status: 503, key: newKey('someone_else') }] })
    expect((await send('GET', '/api/sandbox/openapi.json')).status).toBe(200)
    expect((await send('GET', '/api/sandbox/config')).status).toBe(200)
    expect(logged.map((entry) => entry.fault)).toEqual([undefined])
  })

  it('in process (createSandbox\'s fetch, no socket to cut), a drop rejects as fetch does on a lost connection', async () => {
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, faults: { rules: [{ method: 'GET', fault: 'drop_before' }] } })
    cleanups.push(() => sandbox.close())
    const request = new Request('http://sandbox.test/api/sandbox/config', { headers: { authorization: `Bearer ${newKey('fetch')}` } })
    await expect(sandbox.fetch(request)).rejects.toThrow(/fetch failed/)
  })

  it('without faults, answers and log entries are as ever: no fault field', async () => {
    const { send, activeLoans, logged } = await serveWithFaults(undefined)
    expect((await send('POST', '/api/sandbox/loans', LOAN)).status).toBe(200)
    expect(await activeLoans()).toHaveLength(1)
    expect(logged.map((entry) => Object.keys(entry).sort())).toEqual(Array(2).fill(['at', 'duration_ms', 'error_code', 'idempotency_key', 'key', 'method', 'path', 'request_id', 'status']))
  })
})

describe('fault injection with the project\'s own client', () => {
  it('runs the shipped loan-flow and direct-loan scenarios to a pass with every POST\'s first answer dropped, and issues exactly one loan each', async () => {
    const { listener, key, allLoans, logged } = await serveWithFaults({ rules: [{ method: 'POST', fault: 'drop_after', first_attempt: true }] })
    const scenarios = (await loadScenarios(SHIPPED_SCENARIOS_DIR)).filter((scenario) => scenario.id === 'loan-flow' || scenario.id === 'direct-loan')
    expect(scenarios).toHaveLength(2)
    let lost = 0
    const report = await runScenarios(scenarios, { baseUrl: listener.url, apiKey: key, transport: { onAttempt: (_request, answer) => void (answer instanceof Error && lost++) } })
    expect(report.scenarios.flatMap((scenario) => [scenario.error, ...scenario.steps.filter((step) => !step.ok)])).toEqual([undefined, undefined])
    expect(report.failed).toBe(0)
    expect(report.passed).toBe(2)
    // Each scenario issues one loan and closes it again.
    expect(await allLoans()).toHaveLength(2)
    // The client met each cut as a network error and retried it: one per POST of the scenario.
    const dropped = logged.filter((entry) => entry.fault === 'drop_after').length
    expect(dropped).toBeGreaterThanOrEqual(4)
    expect(lost).toBe(dropped)
  })
})

describe('a drop_answer step against a server that drops the answer itself', () => {
  it('passes the shipped dropped-connection-retry scenario: the answer is lost either way, and the replay follows', async () => {
    const { listener, key } = await serveWithFaults({ rules: [{ method: 'POST', fault: 'drop_after', first_attempt: true }] })
    const scenarios = (await loadScenarios(SHIPPED_SCENARIOS_DIR)).filter((scenario) => scenario.id === 'dropped-connection-retry')
    const report = await runScenarios(scenarios, { baseUrl: listener.url, apiKey: key })
    expect(report.scenarios.flatMap((scenario) => [scenario.error, ...scenario.steps.filter((step) => !step.ok)])).toEqual([undefined])
    const lost = report.scenarios[0]!.steps.filter((step) => step.status === null && step.kind === 'request')
    expect(lost.map((step) => step.note)).toEqual(Array(2).fill('answer lost on purpose (the server closed the connection before answering)'))
  })
})
