import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { loadScenarios, parseScenario, SHIPPED_SCENARIOS_DIR } from '../../src/scenarios/load-scenarios.js'
import { runScenarios } from '../../src/scenarios/run-scenarios.js'
import { formatJunitReport } from '../../src/scenarios/junit-report.js'
import { createKeyRecord } from '../../src/keys/keys-file.js'
import { writeKeysFile } from '../../src/keys/write-keys-file.js'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { StepReport } from '../../src/scenarios/report-types.js'
import { createTestApi, listenTestApi, newKey } from '../helpers/api.js'
import { checkAnswerAgainstContract } from '../helpers/contract.js'
import { startReceiver } from '../helpers/receiver.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

const scenario = (id: string, steps: unknown[], extra: Record<string, unknown> = {}) =>
  parseScenario(`${id}.json`, JSON.stringify({ name: id, description: id, steps, ...extra }))

describe('sandbox run scenarios', () => {
  it('every shipped scenario passes against an in-process server it starts and stops', async () => {
    const scenarios = await loadScenarios(SHIPPED_SCENARIOS_DIR)
    const steps: StepReport[] = []
    const contract: string[] = []
    let checked = 0
    const report = await runScenarios(scenarios, {
      onStep: (_s, step) => steps.push(step),
      // Every answer the scenarios receive must keep the OpenAPI contract too.
      transport: {
        onAttempt: (request, answer) => {
          // A drop_answer step reads no body: nothing to check it against.
          if (answer instanceof Error || answer.bodyUnread) return
          checked++
          contract.push(...checkAnswerAgainstContract(request.method, request.path, answer.status, answer.headers, answer.text))
        },
      },
    })
    expect(contract).toEqual([])
    expect(checked).toBeGreaterThan(60)
    const failures = report.scenarios.filter((s) => s.status !== 'passed').map((s) => `${s.id}: ${s.error ?? JSON.stringify(s.steps.find((step) => !step.ok))}`)
    expect(failures).toEqual([])
    expect(report).toMatchObject({ passed: scenarios.length, failed: 0, skipped: 0, started_server: true })
    expect(report.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(report.requests).toBeGreaterThan(60)
    expect(steps.length).toBe(report.scenarios.reduce((sum, s) => sum + s.steps.length, 0))
    // No shipped step sends a field the server ignores: that would be a typo the step hides.
    expect(steps.filter((step) => step.note?.includes('the server ignored')).map((step) => `${step.method} ${step.path}: ${step.note}`)).toEqual([])
    // The recovery step jumped over the step it did not need.
    const recovery = report.scenarios.find((s) => s.id === 'out-of-order-recovery')!
    expect(recovery.steps.map((s) => s.name)).not.toContain('(skipped by recovery) start again')
    expect(recovery.steps.find((s) => s.name === 'recover: GET state tells where the flow stands')!.note).toBe('state says next: confirm_btc, continuing at step 14')
    // With no draft left by an earlier run, the leftover-draft steps are jumped over too.
    expect(recovery.steps[0]!.note).toBe('state says next: start_collateral_transfer, continuing at step 6')
    // The in-process server is gone afterwards.
    await expect(fetch(`${report.base_url}/api/sandbox/config`)).rejects.toThrow()
  })

  it('asks a remote server its api_version once, and says when it is not the scenarios\' (spec part 9: a breaking change is a new version)', async () => {
    const scenarios = [scenario('config', [{ request: { method: 'GET', path: '/api/sandbox/config' } }])]
    for (const [version, told] of [['0.4.0', ['0.4.0']], ['0.3.0', []]] as const) {
      const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {}, config: { api_version: version } })
      const server = await listenTestApi(sandbox)
      try {
        const versions: string[] = []
        const report = await runScenarios(scenarios, { baseUrl: server.url, remote: true, onApiVersion: (seen) => versions.push(seen) })
        expect(versions, version).toEqual(told)
        // The question is one more request of the run.
        expect(report, version).toMatchObject({ passed: 1, api_version: version, requests: 2 })
        // A local server (this package's serve, or a test's scripted one) is not asked.
        const local = await runScenarios(scenarios, { baseUrl: server.url, onApiVersion: (seen) => versions.push(seen) })
        expect([versions, local.api_version, local.requests], version).toEqual([told, null, 1])
      } finally {
        await server.close()
        await sandbox.close()
      }
    }
    // An in-process server is this package's: not asked.
    const versions: string[] = []
    const own = await runScenarios(scenarios, { onApiVersion: (seen) => versions.push(seen) })
    expect([versions, own.api_version, own.requests]).toEqual([[], '0.3.0', 1])
  })

  it('does not ask a remote server that stopped answering the scenarios for its api_version', async () => {
    // Answers the first request, then hangs: what a hosted sandbox that went down mid-run looks like.
    let asked = 0
    const server = createServer((req, res) => {
      if (++asked === 1) res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const get = { request: { method: 'GET', path: '/api/sandbox/config' } }
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const report = await runScenarios([scenario('config', [get, get])], { baseUrl, remote: true, apiKey: 'sk_sandbox_hangs_0123456789', transport: { timeoutMs: 300, retries: 0 } })
      expect(report.scenarios[0]!.connection_error).toBe(true)
      // The scenario's two requests, and no question after them to a server that hangs.
      expect([asked, report.api_version]).toEqual([2, null])
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('the README\'s example scenario passes, on one key twice, and leaves no loan open', async () => {
    const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8')
    const text = /```json\n(\{\n  "name": "Interest repayment"[\s\S]+?)\n```/.exec(readme)?.[1]
    expect(text).toBeDefined()
    const example = parseScenario('readme-example.json', text!)
    const apiKey = `sk_sandbox_readme_${randomUUID().replaceAll('-', '')}`
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {} })
    const server = await listenTestApi(sandbox)
    try {
      const report = await runScenarios([example, example], { baseUrl: server.url, apiKey })
      expect(report.scenarios.map((s) => [s.status, s.steps.find((step) => !step.ok)?.failures])).toEqual([['passed', undefined], ['passed', undefined]])
      const state = await (await fetch(`${server.url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${apiKey}` } })).json() as { activeLoans: unknown[] }
      expect(state.activeLoans).toEqual([])
    } finally {
      await server.close()
      await sandbox.close()
    }
  })

  it('a step whose body the server partly ignored passes, with a note naming the fields (a typo in the scenario)', async () => {
    const report = await runScenarios([scenario('typo', [
      { request: { method: 'POST', path: '/api/sandbox/partner', body: { name: 'Acme', emial: 'dev@acme.example', 'é': 1 } }, expect: { status: 200 } },
      { request: { method: 'POST', path: '/api/sandbox/partner', body: { name: 'Acme' } }, expect: { status: 200 } },
      { request: { method: 'POST', path: '/api/sandbox/partner', body: { nmae: 'Acme' } }, expect: { status: 200 } },
    ])])
    const [typo, clean, one] = report.scenarios[0]!.steps
    expect([typo!.ok, typo!.note]).toEqual([true, 'the server ignored the body fields emial, é: not fields of this request (a typo?)'])
    expect(clean!.note).toBeUndefined()
    expect(one!.note).toBe('the server ignored the body field nmae: not a field of this request (a typo?)')
  })

  it('the shipped scenarios clean up after themselves: two full runs on ONE key all pass and leave nothing open', async () => {
    // `sandbox run --api-key KEY` (a registered key, the hosted sandbox) shares one key's state
    // across every scenario and every run, so each must close what it opened.
    const scenarios = (await loadScenarios(SHIPPED_SCENARIOS_DIR)).filter((s) => !s.tags.includes('local-only'))
    expect(scenarios.length).toBeGreaterThanOrEqual(9)
    const api = await createTestApi()
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
    const start = (await api.get('/api/sandbox/loans')).body
    const wallets = [start.wallet]
    for (const run of [1, 2]) {
      const report = await runScenarios(scenarios, { baseUrl: listener.url, apiKey: api.key })
      const failures = report.scenarios.filter((s) => s.status !== 'passed').map((s) => `run ${run} ${s.id}: ${s.error ?? JSON.stringify(s.steps.find((step) => !step.ok))}`)
      expect(failures).toEqual([])
      expect(report).toMatchObject({ passed: scenarios.length, failed: 0, skipped: 0, started_server: false })
      const state = (await api.get('/api/sandbox/loans')).body
      // No open draft, no loan left active, no repayment operation waiting for a step.
      expect(state.draft).toBeNull()
      expect(state.activeLoans).toEqual([])
      const open = (state.sandboxFlow.repaymentOperations as Array<{ operation_id: string; status: string; repayment_kind: string }>).filter(
        (op) => op.status !== 'collateral_returned' && !(op.status === 'settled' && op.repayment_kind !== 'full_principal'),
      )
      expect(open).toEqual([])
      expect(state.loanHistory.every((loan: { status: string }) => loan.status === 'closed')).toBe(true)
      wallets.push(state.wallet)
    }
    // Every BTC of collateral came back, and each run cost the same modest amount of USDT:
    // origination fees and interest, the figure README "sandbox run" states.
    expect(wallets.map((w) => w.BTC)).toEqual([start.wallet.BTC, start.wallet.BTC, start.wallet.BTC])
    const cost = (run: number) => Math.round((wallets[run - 1].USDT - wallets[run].USDT) * 100) / 100
    const stated = Number(/costs the key (\d+) USDT of origination fees and interest/.exec(readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8').replace(/\s+/g, ' '))![1])
    expect([cost(1), cost(2)]).toEqual([stated, stated])
  })

  it('the local-only scenarios share one key too, on a server that allows local webhooks: two runs pass and leave the endpoint disabled', async () => {
    const scenarios = (await loadScenarios(SHIPPED_SCENARIOS_DIR)).filter((s) => s.tags.includes('local-only'))
    expect(scenarios.map((s) => s.id).sort()).toEqual(['key-isolation', 'ltv-and-balance-limits', 'partner-deals-and-rewards', 'webhook-events-rules', 'webhook-loan-events', 'webhook-test-event'])
    const api = await createTestApi({ allowLocalWebhooks: true })
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
    for (const run of [1, 2]) {
      const report = await runScenarios(scenarios, { baseUrl: listener.url, apiKey: api.key, includeLocalOnly: true })
      const failures = report.scenarios.filter((s) => s.status !== 'passed').map((s) => `run ${run} ${s.id}: ${s.error ?? JSON.stringify(s.steps.find((step) => !step.ok))}`)
      expect(failures).toEqual([])
      const state = (await api.get('/api/sandbox/loans')).body
      expect([state.draft, state.activeLoans]).toEqual([null, []])
      expect((await api.get('/api/sandbox/webhooks')).body.endpoint.enabled).toBe(false)
    }
  })

  it('every shipped scenario passes on a key that already holds a loan of its own, and leaves that loan as it was', async () => {
    const api = await createTestApi({ allowLocalWebhooks: true })
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
    const own = await api.post('/api/sandbox/loans', { collateral_btc: 0.05, loan_amount: 2000 }, { idempotencyKey: 'partners-own-loan' })
    expect(own.status).toBe(200)
    const ownLoan = own.body.activeLoans.at(-1)
    const report = await runScenarios(await loadScenarios(SHIPPED_SCENARIOS_DIR), { baseUrl: listener.url, apiKey: api.key, includeLocalOnly: true })
    const failures = report.scenarios.filter((s) => s.status !== 'passed').map((s) => `${s.id}: ${s.error ?? JSON.stringify(s.steps.find((step) => !step.ok))}`)
    expect(failures).toEqual([])
    const after = (await api.get('/api/sandbox/loans')).body
    expect(after.activeLoans).toEqual([ownLoan])
    expect(after.wallet.BTC).toBe(own.body.wallet.BTC)
  })

  it('refuses at load time an Idempotency-Key an HTTP header cannot carry, and fails the step (not the connection) when a variable makes one', async () => {
    expect(() => parseScenario('scenarios/bad.json', JSON.stringify({ name: 'n', description: 'd', steps: [
      { request: { method: 'POST', path: '/api/sandbox/loans', body: {}, idempotency_key: 'ключ-1' } },
    ] }))).toThrow(/an HTTP header carries Latin-1 text only/)
    const made = scenario('made-key', [
      { request: { method: 'GET', path: '/api/sandbox/config' }, capture: { word: 'currencies.0' } },
      { request: { method: 'POST', path: '/api/sandbox/loans', body: { collateral_btc: 0.05, loan_amount: 1000 }, idempotency_key: 'ключ-{{word}}' } },
      { request: { method: 'GET', path: '/api/sandbox/loans' } },
    ])
    const report = await runScenarios([made, scenario('after', [{ request: { method: 'GET', path: '/api/sandbox/config' } }])])
    expect(report.scenarios[0]).toMatchObject({ status: 'failed', error: expect.stringMatching(/^step 2 .*the idempotency-key header cannot carry "ключ-USDT": U\+043A/) })
    expect(report.scenarios[0]!.connection_error).toBeUndefined()
    // Not a connection error: the rest of the run goes on.
    expect(report.scenarios[1]!.status).toBe('passed')
  })

  it('a run that failed with a draft open on a shared key does not fail the next: the shipped scenarios finish a leftover draft first', async () => {
    const api = await createTestApi({ allowLocalWebhooks: true })
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
    const shipped = await loadScenarios(SHIPPED_SCENARIOS_DIR)
    const flow = (body: Record<string, unknown>) => ({ request: { method: 'POST', path: '/api/sandbox/loans/flow', body } })
    const advance = [
      flow({ action: 'start_collateral_transfer', collateral_btc: 0.05, loan_amount: 2000 }),
      flow({ action: 'confirm_btc', tx_hash: 'tx_left_open', confirmations: 6 }),
      flow({ action: 'run_kyt' }),
    ]
    // A scenario that fails (a wrong expectation) after leaving a draft in the given status, as a
    // failed or cancelled run does.
    const leaveDraft = async (steps: number) => {
      const failing = scenario('leaves-a-draft', [...advance.slice(0, steps), { request: { method: 'GET', path: '/api/sandbox/loans' }, expect: { status: 418 } }])
      const report = await runScenarios([failing], { baseUrl: listener.url, apiKey: api.key })
      expect(report.failed).toBe(1)
      return (await api.get('/api/sandbox/loans')).body.draft.status as string
    }
    const expectClean = async (what: string) => {
      const state = (await api.get('/api/sandbox/loans')).body
      expect([what, state.draft, state.activeLoans]).toEqual([what, null, []])
    }
    const opensDraft = ['dropped-connection-retry', 'key-isolation', 'loan-flow', 'ltv-and-balance-limits', 'out-of-order-recovery', 'webhook-loan-events']
    for (const [steps, status] of [[1, 'awaiting_collateral'], [2, 'collateral_confirmed'], [3, 'kyt_completed']] as const) {
      for (const id of opensDraft) {
        expect(await leaveDraft(steps)).toBe(status)
        const report = await runScenarios(shipped.filter((s) => s.id === id), { baseUrl: listener.url, apiKey: api.key, includeLocalOnly: true })
        expect([id, status, report.scenarios[0]!.status, report.scenarios[0]!.steps.find((step) => !step.ok)]).toEqual([id, status, 'passed', undefined])
        await expectClean(`${id} after a draft left ${status}`)
      }
    }
    // And a whole run after a failed one.
    await leaveDraft(2)
    const report = await runScenarios(shipped, { baseUrl: listener.url, apiKey: api.key, includeLocalOnly: true })
    expect(report.scenarios.filter((s) => s.status !== 'passed').map((s) => s.id)).toEqual([])
    await expectClean('a full run after a draft left collateral_confirmed')
  })

  it('names a leftover draft or repayment operation on a shared key, and how to get rid of it', async () => {
    const api = await createTestApi()
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
    const left = (await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.05, loan_amount: 2000 })).body.draft.id
    const loan = (await api.post('/api/sandbox/loans', { collateral_btc: 0.05, loan_amount: 2000 })).body.activeLoans.at(-1).id
    const op = (await api.post(`/api/sandbox/loans/${loan}/repayment-flow`, { action: 'start_payment', repayment_kind: 'interest' })).body.sandboxFlow.repaymentOperations.at(-1).operation_id
    // A scenario of the partner's own, without the shipped scenarios' leftover-draft steps.
    const own = scenario('own', [
      { request: { method: 'POST', path: '/api/sandbox/loans/flow', body: { action: 'start_collateral_transfer', collateral_btc: 0.05, loan_amount: 2000 } } },
    ])
    const repay = scenario('repay', [
      { request: { method: 'POST', path: `/api/sandbox/loans/${loan}/action`, body: { action: 'repay_interest', amount: 1 } } },
    ])
    const report = await runScenarios([own, repay], { baseUrl: listener.url, apiKey: api.key })
    expect(report.scenarios[0]!.steps[0]!.note).toBe(`the key already had a draft open (application ${left}, awaiting_collateral; next: confirm_btc), most likely left by an earlier run on this shared key that failed or was stopped (or a run on this key going on now: runs sharing a key must not overlap): finish it (the shipped scenarios do, in their "leftover draft" steps), or \`sandbox keys reset KEY\` (a registered key) or a fresh key starts clean`)
    expect(report.scenarios[1]!.steps[0]!.note).toBe(`the loan already had repayment operation ${op} open (awaiting_payment; next: confirm_usdt), most likely left by an earlier run on this shared key that failed or was stopped (or a run on this key going on now: runs sharing a key must not overlap): finish it with the repayment flow, or \`sandbox keys reset KEY\` (a registered key) or a fresh key starts clean`)
    // A scenario's own draft answered 409 is its own doing: no leftover to name.
    const twice = scenario('twice', [own.steps[0]!, own.steps[0]!])
    const fresh = await runScenarios([twice], { baseUrl: listener.url, apiKey: newKey('own_draft') })
    expect(fresh.scenarios[0]!.steps[1]).toMatchObject({ ok: false, error_code: 'FLOW_CONFLICT' })
    expect(fresh.scenarios[0]!.steps[1]!.note).toBeUndefined()
  })

  it('fails a scenario whose expectation is wrong, at that step, with what was sent and received', async () => {
    const wrong = scenario('wrong-status', [
      { request: { method: 'POST', path: '/api/sandbox/loans/flow', body: { action: 'run_kyt' } }, expect: { status: 200 } },
      { request: { method: 'GET', path: '/api/sandbox/loans' } },
    ])
    const report = await runScenarios([wrong])
    const [result] = report.scenarios
    expect(result!.status).toBe('failed')
    expect(result!.steps).toHaveLength(1)
    expect(result!.steps[0]).toMatchObject({
      ok: false,
      status: 409,
      error_code: 'FLOW_CONFLICT',
      sent: { body: { action: 'run_kyt' }, idempotency_key: expect.any(String) },
      failures: [{ field: 'status', expected: 200, actual: 409, message: 'status: expected 200, got 409' }],
      received: expect.objectContaining({ error_code: 'FLOW_CONFLICT' }),
    })
    expect(report).toMatchObject({ passed: 0, failed: 1 })
  })

  it('runs against a given base URL and with a given key, and --bail skips the rest', async () => {
    const api = await createTestApi()
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
    const failing = scenario('fails', [{ request: { method: 'GET', path: '/api/sandbox/nowhere' }, expect: { status: 200 } }])
    const passing = scenario('passes', [{ request: { method: 'POST', path: '/api/sandbox/loans', body: { collateral_btc: 0.5, loan_amount: 20000 } } }])
    const report = await runScenarios([passing, failing, passing], { baseUrl: listener.url, apiKey: api.key, bail: true })
    expect(report.scenarios.map((s) => s.status)).toEqual(['passed', 'failed', 'skipped'])
    expect(report.scenarios[2]!.error).toBe('not run: --bail after a failed scenario')
    expect(report.started_server).toBe(false)
    // The loan was made with the given key.
    expect((await api.get('/api/sandbox/loans')).body.activeLoans).toHaveLength(1)
  })

  it('the webhook scenarios pass on a server that also forwards every event (serve --webhook-forward-to)', async () => {
    const forward = await startReceiver()
    const api = await createTestApi({ allowLocalWebhooks: true, webhookForwardTo: forward.url })
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close(); await forward.close() })
    const scenarios = (await loadScenarios(SHIPPED_SCENARIOS_DIR)).filter((s) => s.tags.includes('webhooks'))
    const report = await runScenarios(scenarios, { baseUrl: listener.url })
    expect(report.scenarios.map((s) => [s.id, s.status, s.steps.find((step) => !step.ok)?.failures])).toEqual(scenarios.map((s) => [s.id, 'passed', undefined]))
    // The forwarded copies were in the delivery log beside the endpoint's.
    expect(forward.received.length).toBeGreaterThanOrEqual(10)
  })

  it('tells how to fix a server that refuses the runner\'s local receiver', async () => {
    const api = await createTestApi()
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
    const scenarios = (await loadScenarios(SHIPPED_SCENARIOS_DIR)).filter((s) => s.id === 'webhook-test-event')
    const report = await runScenarios(scenarios, { baseUrl: listener.url, includeLocalOnly: true })
    expect(report.scenarios[0]!.steps[0]).toMatchObject({
      ok: false, status: 400, error_code: 'WEBHOOK_URL_INVALID',
      note: "the server refuses the runner's receiver on this machine: start it with `sandbox serve --allow-local-webhooks`, or leave out the local-only scenarios",
    })
  })

  it('skips local-only scenarios against a remote base URL without sending anything', async () => {
    const scenarios = (await loadScenarios(SHIPPED_SCENARIOS_DIR)).filter((s) => s.tags.includes('local-only'))
    const report = await runScenarios(scenarios, { baseUrl: 'https://sandbox.invalid' })
    expect(report.scenarios.every((s) => s.status === 'skipped' && s.error!.startsWith('local-only'))).toBe(true)
    expect(report.requests).toBe(0)
  })

  it('runs local-only scenarios against this machine written as an IPv4-mapped IPv6 address', async () => {
    const api = await createTestApi()
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
    const mapped = listener.url.replace('127.0.0.1', '[::ffff:127.0.0.1]')
    const scenarios = (await loadScenarios(SHIPPED_SCENARIOS_DIR)).filter((s) => s.id === 'ltv-and-balance-limits')
    const report = await runScenarios(scenarios, { baseUrl: mapped })
    expect(report.scenarios.map((s) => [s.id, s.status, s.error])).toEqual([['ltv-and-balance-limits', 'passed', undefined]])
  })

  it('stops the run with a connection error when the server cannot be reached', async () => {
    const api = await createTestApi()
    const listener = await listenTestApi(api.sandbox)
    await listener.close()
    await api.sandbox.close()
    const one = scenario('one', [{ request: { method: 'GET', path: '/api/sandbox/config' } }])
    const report = await runScenarios([one, one], { baseUrl: listener.url, transport: { retries: 0 } })
    expect(report.scenarios[0]).toMatchObject({ status: 'failed', connection_error: true, error: expect.stringMatching(/^cannot reach .*ECONNREFUSED/) })
    expect(report.scenarios[1]).toMatchObject({ status: 'skipped' })
  })

  it('a server that takes connections but never answers: each retry is told, the error says how long, and the run timeout is 10 s', async () => {
    const { createServer: createTcpServer } = await import('node:net')
    const sockets = new Set<import('node:net').Socket>()
    const server = createTcpServer((socket) => { sockets.add(socket); socket.on('error', () => {}) })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise<void>((resolve) => { for (const socket of sockets) socket.destroy(); server.close(() => resolve()) }))
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const one = scenario('one', [{ request: { method: 'GET', path: '/api/sandbox/config' } }])
    const waits: string[] = []
    const report = await runScenarios([one, one], {
      baseUrl,
      transport: { timeoutMs: 200, onRetryWait: ({ reason, attempt, maxAttempts, error }) => waits.push(`${reason} ${attempt}/${maxAttempts} ${error?.name}`) },
    })
    expect(waits).toEqual(['network_error 1/4 FetchError', 'network_error 2/4 FetchError', 'network_error 3/4 FetchError'])
    expect(report.scenarios[0]).toMatchObject({ connection_error: true, error: `cannot reach ${baseUrl}/api/sandbox/config (timed out after 4 attempts of 0.2 s each)` })
    expect(report.scenarios[1]).toMatchObject({ status: 'skipped', error: 'not run: the run stopped when one could not reach the server' })
    // Without a timeout of its own, a run gives each attempt 10 s, not the client's 30 s (which
    // would also outlast this test's 20 s).
    const alone = await runScenarios([one], { baseUrl, transport: { retries: 0 } })
    expect(alone.scenarios[0]!.error).toBe(`cannot reach ${baseUrl}/api/sandbox/config (timed out after 1 attempt of 10 s each)`)
  })

  it('waits a Retry-After beyond the client\'s 30 s (up to 5 min), and past that fails the step at once, saying why', async () => {
    // A rate limiter that refuses the first request of each scenario with the Retry-After asked for.
    let retryAfter = '45'
    let count = 0
    const server = createServer((_req, res) => {
      if (count++ === 0) res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter }).end('{"error_code":"SANDBOX_RATE_LIMIT_EXCEEDED"}')
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const one = scenario('one', [{ request: { method: 'GET', path: '/api/sandbox/config' } }])
    // The wait asked for is the wait taken (the client alone caps it at 30 s); the test stops at
    // the wait rather than sit through it.
    const waits: number[] = []
    const stopAtWait = { onRetryWait: ({ ms }: { ms: number }) => { waits.push(ms); throw new Error('stopped at the wait') } }
    await runScenarios([one], { baseUrl, apiKey: 'sk_sandbox_retry_after_test_01', transport: stopAtWait })
    expect(waits).toEqual([45_000])
    // Above 5 minutes it does not wait at all: the step fails with the reason.
    count = 0
    retryAfter = '400'
    const report = await runScenarios([one], { baseUrl, apiKey: 'sk_sandbox_retry_after_test_01', transport: stopAtWait })
    // No wait begun: onRetryWait, told before each, heard of none.
    expect(waits).toEqual([45_000])
    expect(report.scenarios[0]!.steps[0]).toMatchObject({
      ok: false, status: 429,
      note: 'rate limited: the server asks to wait 400 s (Retry-After), longer than the 300 s a run waits at most; run again later, or against a server with a higher --rate-limit',
    })
    // A short wait is waited and the step passes.
    count = 0
    retryAfter = '1'
    const short = await runScenarios([one], { baseUrl, apiKey: 'sk_sandbox_retry_after_test_01' })
    expect(short.scenarios[0]).toMatchObject({ status: 'passed', requests: 2 })
  })

  it('stops the run when the server refuses the run\'s key, saying what to do; a scenario that makes keys is skipped on a registered-keys server', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-run-keys-'))
    const keysFile = join(dir, 'keys.json')
    const good = createKeyRecord({ now: new Date() })
    const revoked = { ...createKeyRecord({ now: new Date() }), revoked_at: new Date(Date.now() - 1000).toISOString() }
    await writeKeysFile(keysFile, { version: 1, keys: [good, revoked] })
    const api = await createTestApi({ keysFile })
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close(); await rm(dir, { recursive: true, force: true }) })
    const shipped = await loadScenarios(SHIPPED_SCENARIOS_DIR)
    const pick = (...ids: string[]) => ids.map((id) => shipped.find((s) => s.id === id)!)

    // Default keys: a fresh generated one per scenario, which this server refuses.
    const generated = await runScenarios(pick('loan-flow', 'repay-full'), { baseUrl: listener.url })
    expect(generated.scenarios[0]).toMatchObject({ status: 'failed', key_refused: true, requests: 1 })
    expect(generated.scenarios[0]!.steps[0]!.note).toBe('the server accepts only registered keys (a fresh generated key got 401 SANDBOX_API_KEY_INVALID: The API key is not registered on this sandbox.): pass one with --api-key (`sandbox keys create --keys FILE` makes one)')
    expect(generated.scenarios[1]).toMatchObject({ status: 'skipped', error: "not run: the run stopped when the server refused loan-flow's key" })
    expect(formatJunitReport(generated)).toContain('<error message="step 1 (leftover draft: GET state says whether an earlier run left a draft open on this key (a shared --api-key), and if so where to finish it): the server accepts only registered keys (a fresh generated key got 401 SANDBOX_API_KEY_INVALID: The API key is not registered on this sandbox.): pass one with --api-key (`sandbox keys create --keys FILE` makes one)" type="KeyRefused">')

    // A revoked --api-key.
    const withRevoked = await runScenarios(pick('loan-flow', 'repay-full'), { baseUrl: listener.url, apiKey: revoked.key })
    expect(withRevoked.scenarios.map((s) => s.status)).toEqual(['failed', 'skipped'])
    expect(withRevoked.scenarios[0]!.steps[0]!.note).toBe("the server refuses the run's --api-key (401 SANDBOX_API_KEY_INVALID: The API key is revoked.): check it with `sandbox keys list`, or create one with `sandbox keys create`")
    // A step that expects the 401 is a check like any other, not a refusal of the run.
    const expects401 = scenario('expects-401', [{ request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status: 401, error_code: 'SANDBOX_API_KEY_INVALID' } }])
    const checked = await runScenarios([expects401, expects401], { baseUrl: listener.url, apiKey: revoked.key })
    expect(checked.scenarios.map((s) => [s.status, s.key_refused])).toEqual([['passed', undefined], ['passed', undefined]])

    // A registered key: key-isolation (which makes a second key) is skipped, with the reason, after one probe.
    const registered = await runScenarios(pick('key-isolation', 'loan-flow', 'key-isolation'), { baseUrl: listener.url, apiKey: good.key, includeLocalOnly: true })
    expect(registered.scenarios.map((s) => s.status)).toEqual(['skipped', 'passed', 'skipped'])
    expect(registered.scenarios[0]!.error).toBe('needs open mode: it makes its own keys (other), and this server accepts only registered keys (a generated key got 401 SANDBOX_API_KEY_INVALID)')
    expect(registered.requests).toBe(registered.scenarios[1]!.requests + 1)
    // Asked of a remote one, its api_version is read with the run's key: a generated key would get 401.
    const remote = await runScenarios([scenario('config', [{ request: { method: 'GET', path: '/api/sandbox/config' } }])], { baseUrl: listener.url, apiKey: good.key, remote: true })
    expect([remote.passed, remote.api_version]).toEqual([1, '0.3.0'])
  })

  it('sends a GET with until_ms again until its expectation holds, and gives up when the time is over', async () => {
    // A server whose answer changes after the fact, as the delivery log does once an attempt ends.
    let count = 0
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count: ++count })))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const polls = scenario('polls', [
      { request: { method: 'GET', path: '/count', until_ms: 5000 }, expect: { body: { count: 3 } }, capture: { seen: 'count' } },
      { request: { method: 'GET', path: '/count', until_ms: 300 }, expect: { body: { count: 1000 } } },
    ])
    const captureFails = scenario('capture-fails', [
      { request: { method: 'GET', path: '/count', until_ms: 5000 }, expect: { body: { count: { $gte: 2 } } }, capture: { missing: 'nope' } },
    ])
    const report = await runScenarios([polls], { baseUrl, apiKey: 'sk_sandbox_until_ms_test_key' })
    const [held, never] = report.scenarios[0]!.steps
    expect(held).toMatchObject({ ok: true, note: 'sent 3 times until expect held' })
    expect(never).toMatchObject({ ok: false, note: expect.stringMatching(/^sent \d+ times in 300 ms; expect never held$/), failures: [expect.objectContaining({ field: 'body.count', expected: 1000 })] })
    // Sent every 100 ms, about three more times in 300 ms; the answer reported is the last one.
    expect(count - 3).toBeGreaterThanOrEqual(2)
    expect(count - 3).toBeLessThanOrEqual(5)
    expect(never!.received).toEqual({ count })
    expect(report.requests).toBe(count)
    // The expectation held; only the capture failed, and the note says which.
    count = 0
    const [captured] = (await runScenarios([captureFails], { baseUrl, apiKey: 'sk_sandbox_until_ms_test_key' })).scenarios[0]!.steps
    expect(captured).toMatchObject({ ok: false, note: 'sent 2 times until expect held', failures: [expect.objectContaining({ field: 'capture.missing' })] })
  })

  it('fails a webhook wait that gets no delivery, naming the event', async () => {
    const waiting = scenario('no-delivery', [
      { request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } } },
      { wait_for_webhook: { type: 'sandbox.loan.issued', timeout_ms: 100 } },
    ])
    const report = await runScenarios([waiting])
    expect(report.scenarios[0]!.steps[1]!.failures[0]!.message).toBe('no delivery of sandbox.loan.issued within 100 ms')
  })

  it('names the step of a mistake only the run can find, and sends nothing for it', async () => {
    const objectInText = scenario('object-in-text', [
      { request: { method: 'GET', path: '/api/sandbox/config' }, capture: { rates: 'rates' } },
      { request: { method: 'GET', path: '/api/sandbox/loans/{{rates}}' } },
    ])
    const report = await runScenarios([objectInText])
    expect(report.scenarios[0]).toMatchObject({
      status: 'failed',
      requests: 1,
      error: 'step 2 (GET /api/sandbox/loans/{{rates}}): {{rates}} holds an object: use it as a whole value ("{{rates}}"), not inside a text',
    })
    // The step is in the report as every failed one is (the JUnit step log and a GitHub annotation read it there), as written.
    expect(report.scenarios[0]!.steps.at(-1)).toMatchObject({
      index: 1, ok: false, method: 'GET', path: '/api/sandbox/loans/{{rates}}', status: null,
      failures: [{ field: 'step', message: '{{rates}} holds an object: use it as a whole value ("{{rates}}"), not inside a text' }],
    })
  })

  it('says a webhook\'s signature did not verify, not that it was left unchecked', async () => {
    const api = await createTestApi({ allowLocalWebhooks: true })
    const listener = await listenTestApi(api.sandbox)
    cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
    const wrongSecret = scenario('wrong-secret', [
      { request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } } },
      { request: { method: 'POST', path: '/api/sandbox/webhooks/test' } },
      { wait_for_webhook: { type: 'sandbox.webhook.test', secret: 'whsec_not_the_one' } },
    ])
    const report = await runScenarios([wrongSecret], { baseUrl: listener.url, includeLocalOnly: true })
    const wait = report.scenarios[0]!.steps[2]!
    expect(wait.ok).toBe(false)
    expect(wait.note).toBeUndefined()
    expect(wait.failures[0]!.field).toBe('webhook signature')
  })
})
