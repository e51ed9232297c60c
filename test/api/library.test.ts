import { afterEach, describe, expect, it } from 'vitest'
import {
  createSandbox,
  createSandboxClient,
  listenSandbox,
  SandboxConnectionError,
  scenarioSchema,
  loadScenarios,
  selectScenarios,
  SHIPPED_SCENARIOS_DIR,
  UnknownScenarioError,
  type CreateLoanInput,
  type Delivery,
  type Envelope,
  type LoanFlowInput,
  type LoanStateView,
  type RepaymentFlowInput,
  type VerifyReceiverOptions,
  startWebhookListener,
  verifyWebhook,
  constructWebhookEvent,
  runScenarios,
  signWebhook,
  type SandboxWebhookEvent,
  type DeepPartial,
  type DeliveryReport,
  type ReceivedWebhook,
  type SandboxConfig,
  type SandboxListener,
} from '../../src/index.js'

// What a partner's own test suite does with the package: no CLI, only its exports.
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('the library, as a partner\'s test suite uses it', () => {
  it('serves a sandbox on a free loopback port, walks a loan with the client and gets its webhooks, signed', async () => {
    const received: ReceivedWebhook[] = []
    const reports: DeliveryReport[] = []
    const receiver = await startWebhookListener({ port: 0, onDelivery: (delivery) => received.push(delivery) })
    cleanups.push(() => receiver.close())
    const config: DeepPartial<SandboxConfig> = { rates: { btc_usd: 50_000 } }
    const sandbox = await createSandbox({ config, webhookForwardTo: `${receiver.url}/hooks`, onDelivery: (report) => reports.push(report) })
    cleanups.push(() => sandbox.close())
    const listener: SandboxListener = await listenSandbox(sandbox)
    cleanups.push(() => listener.close())
    expect(listener.url).toBe(`http://127.0.0.1:${listener.port}`)
    expect(listener.port).toBeGreaterThan(0)

    const client = createSandboxClient({ baseUrl: listener.url, apiKey: 'sk_sandbox_library_test_key_1' })
    expect((await client.getConfig()).rates.btc_usd).toBe(50_000)
    await client.loanFlow({ action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 10_000, loan_currency: 'USDT' })
    await client.loanFlow({ action: 'confirm_btc', tx_hash: 'tx_library_1', confirmations: 2 })
    await client.loanFlow({ action: 'run_kyt' })
    const issued = await client.loanFlow({ action: 'complete_payout' })
    expect(issued.activeLoans).toHaveLength(1)

    await expect.poll(() => reports.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(4)
    await sandbox.deliveriesIdle()
    expect(reports.every((report) => report.status === 'delivered' && report.status_code === 200)).toBe(true)
    expect(received.map((delivery) => delivery.event_type)).toEqual(reports.map((report) => report.event_type))
    for (const delivery of received) {
      expect(delivery.path).toBe('/hooks')
      expect(() => verifyWebhook({ secret: sandbox.forwardSecret!, body: delivery.body, headers: delivery.headers })).not.toThrow()
    }
    // A receiver in TypeScript: verified and parsed in one call, narrowed on the type.
    const events: SandboxWebhookEvent[] = received.map((delivery) => constructWebhookEvent({ secret: sandbox.forwardSecret!, body: delivery.body, headers: delivery.headers }))
    const loanIssued = events.find((event) => event.type === 'sandbox.loan.issued')
    if (loanIssued?.type !== 'sandbox.loan.issued') throw new Error('no sandbox.loan.issued delivery')
    expect(loanIssued.data.object.id).toBe(issued.activeLoans[0]!.id)
    expect(loanIssued.data.object.debt).toBe(issued.activeLoans[0]!.debt)
  })

  it('refuses a busy port with code EADDRINUSE instead of moving to another, a host it cannot listen on, and a port or close timeout that is no whole number in range', async () => {
    const sandbox = await createSandbox()
    cleanups.push(() => sandbox.close())
    const first = await listenSandbox(sandbox)
    cleanups.push(() => first.close())
    await expect(listenSandbox(sandbox, { port: first.port })).rejects.toMatchObject({ code: 'EADDRINUSE', message: `port ${first.port} on 127.0.0.1 is already in use; pick another port (0 = any free port) or stop the other process` })
    // A port as a variable's text was reported as busy; a negative closeTimeoutMs cut every request.
    await expect(listenSandbox(sandbox, { port: String(first.port) as never })).rejects.toThrow(new RangeError(`port '${first.port}': expected a whole number from 0 to 65535 (0 = any free port); a variable's text needs Number()`))
    await expect(listenSandbox(sandbox, { port: 65536 })).rejects.toThrow(new RangeError('port 65536: expected a whole number from 0 to 65535 (0 = any free port)'))
    await expect(listenSandbox(sandbox, { closeTimeoutMs: -1 })).rejects.toThrow(new RangeError('closeTimeoutMs -1: expected milliseconds, a whole number from 0'))
    // An address this machine does not have (TEST-NET-1): nothing is sent, binding fails.
    await expect(listenSandbox(sandbox, { host: '192.0.2.77' })).rejects.toMatchObject({ code: 'EADDRNOTAVAIL', message: expect.stringMatching(/^cannot listen on host 192\.0\.2\.77 \(EADDRNOTAVAIL\)/) })
  })

  it('refuses the promise of createSandbox, not awaited, with a TypeError that says to await it', async () => {
    // A JavaScript globalSetup that forgot the await got "Cannot read properties of undefined (reading 'fetch')".
    const pending = createSandbox()
    cleanups.push(async () => (await pending).close())
    await expect(listenSandbox(pending as never)).rejects.toThrow(new TypeError('listenSandbox takes the sandbox createSandbox resolves with, not its promise: await createSandbox() first'))
    await expect(listenSandbox(undefined as never)).rejects.toThrow(new TypeError('listenSandbox takes the sandbox createSandbox resolves with, not undefined'))
  })

  it('refuses a port browsers and fetch() block as such (code UNSAFE_PORT), not as a busy one, and the client does not retry it', async () => {
    const sandbox = await createSandbox()
    cleanups.push(() => sandbox.close())
    await expect(listenSandbox(sandbox, { port: 6665 })).rejects.toMatchObject({
      code: 'UNSAFE_PORT',
      message: 'port 6665 is one that browsers and fetch() refuse to connect to (a blocked port of the fetch standard, https://fetch.spec.whatwg.org/#port-blocking); pick another port (0 = any free port)',
    })
    // fetch refuses the port before connecting: nothing is sent, and every attempt would end alike.
    const attempts: unknown[] = []
    const client = createSandboxClient({ baseUrl: 'http://127.0.0.1:10080', apiKey: 'sk_sandbox_library_bad_port_01', onAttempt: (_request, answer) => attempts.push(answer) })
    const error = await client.getConfig().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SandboxConnectionError)
    expect(error).toMatchObject({ blockedPort: true, attempts: 1, message: 'cannot reach http://127.0.0.1:10080/api/sandbox/config: fetch refuses port 10080 before connecting, as browsers do (a blocked port of the fetch standard, https://fetch.spec.whatwg.org/#port-blocking); serve the sandbox on another port' })
    expect(attempts).toHaveLength(1)
  })

  it('exports the types its functions take and return, and the errors they throw', async () => {
    // Named here so that the type check fails if one of them stops being exported.
    const body: CreateLoanInput = { collateral_btc: 0.5, loan_amount: 20000 }
    const sandbox = await createSandbox()
    cleanups.push(() => sandbox.close())
    const listener = await listenSandbox(sandbox)
    cleanups.push(() => listener.close())
    const answer: Envelope & LoanStateView = await createSandboxClient({ baseUrl: listener.url, apiKey: 'sk_sandbox_library_types_key_01' }).createLoan(body)
    expect(answer.activeLoans).toHaveLength(1)
    const statuses: Delivery['status'][] = ['pending', 'delivered', 'retrying', 'failed']
    const options: VerifyReceiverOptions | undefined = undefined
    expect([statuses.length, options]).toEqual([4, undefined])
    const all = await loadScenarios(SHIPPED_SCENARIOS_DIR)
    expect(() => selectScenarios(all, ['no-such-scenario'])).toThrow(UnknownScenarioError)
  })

  it('refuses numeric options that would misbehave quietly, naming the option (a NaN delay retried at once, a limit of 0 refused every request)', async () => {
    const refusals: Array<[Parameters<typeof createSandbox>[0], string]> = [
      [{ webhookRetrySchedule: [5, -1] }, 'webhookRetrySchedule [5, -1]: expected delays in milliseconds, at least one, whole numbers from 0 to 86400000 (24 hours), such as [5000, 30000]'],
      [{ webhookRetrySchedule: [Number('5s')] }, 'webhookRetrySchedule [NaN]: expected'],
      [{ webhookRetrySchedule: [] }, 'webhookRetrySchedule []: expected'],
      [{ webhookRetrySchedule: [86_400_001] }, 'webhookRetrySchedule [86400001]: expected'],
      [{ rateLimit: { limit: 0, windowSeconds: 60 } }, 'rateLimit { limit: 0, windowSeconds: 60 }: expected { limit, windowSeconds }, whole numbers from 1 (or false for no limit)'],
      [{ rateLimit: { limit: 10, windowSeconds: 0.5 } }, 'rateLimit { limit: 10, windowSeconds: 0.5 }: expected'],
      [{ webhookTimeoutMs: Number.NaN }, 'webhookTimeoutMs NaN: expected milliseconds, a whole number from 1 to 600000'],
    ]
    for (const [options, message] of refusals) await expect(createSandbox(options), message).rejects.toThrow(message)
    const sandbox = await createSandbox({ webhookRetrySchedule: [0, 86_400_000], rateLimit: { limit: 1, windowSeconds: 1 }, webhookTimeoutMs: 600_000 })
    await sandbox.close()
  })

  it('takes an option given as undefined (an environment variable not set) as one not given, as its types say', async () => {
    const unset: string | undefined = undefined
    const sandbox = await createSandbox({ storage: undefined, dataDir: unset, keysFile: unset, rateLimit: undefined, webhookForwardTo: unset, webhookRetrySchedule: undefined, webhookTimeoutMs: undefined, logError: undefined })
    cleanups.push(() => sandbox.close())
    const listener = await listenSandbox(sandbox, { port: undefined, host: unset, closeTimeoutMs: undefined, timeouts: { headersMs: undefined, keepAliveMs: undefined }, tls: undefined })
    expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const scenarios = selectScenarios(await loadScenarios(SHIPPED_SCENARIOS_DIR), ['direct-loan'])
    const report = await runScenarios(scenarios, { baseUrl: listener.url, apiKey: 'sk_sandbox_undefined_options_0001', receiverPort: undefined, receiverUrl: unset, remote: undefined, transport: undefined, signal: undefined })
    expect([report.passed, report.failed]).toEqual([1, 0])
    const body = '{}'
    const { headers } = signWebhook({ secret: 'whsec_undefined_options_0001', body, eventId: 'evt_1', eventType: 'sandbox.webhook.test', timestamp: undefined })
    expect(verifyWebhook({ secret: 'whsec_undefined_options_0001', body, headers, toleranceSeconds: undefined, now: undefined }).eventId).toBe('evt_1')
  })

  it('types each flow step with the fields it needs, so a forgotten one fails the type check', async () => {
    // The @ts-expect-error lines are the test: `npm test` type-checks this file first, and a line
    // that no longer fails to compile fails the check.
    const loanSteps: LoanFlowInput[] = [
      { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20_000 },
      { action: 'confirm_btc', tx_hash: 'tx_1', confirmations: 2, application_id: 'app_1' },
      { action: 'run_kyt' },
      // @ts-expect-error confirm_btc needs tx_hash
      { action: 'confirm_btc', confirmations: 2 },
      // @ts-expect-error start_collateral_transfer needs loan_amount
      { action: 'start_collateral_transfer', collateral_btc: 0.5 },
    ]
    const repaymentSteps: RepaymentFlowInput[] = [
      { action: 'start_payment', repayment_kind: 'interest' },
      { action: 'start_payment', repayment_kind: 'partial_principal', amount: 100 },
      { action: 'start_payment', full_repayment: true },
      { action: 'confirm_usdt', operation_id: 'op_1', tx_hash: 'tx_2', confirmations: 6 },
      // @ts-expect-error partial_principal needs amount
      { action: 'start_payment', repayment_kind: 'partial_principal' },
      // @ts-expect-error every step after start_payment needs operation_id
      { action: 'run_kyt' },
      // @ts-expect-error full_repayment true means full_principal
      { action: 'start_payment', repayment_kind: 'interest', full_repayment: true },
    ]
    // What the types refuse, the server refuses too: the client's `request` still sends it.
    const sandbox = await createSandbox()
    cleanups.push(() => sandbox.close())
    const listener = await listenSandbox(sandbox)
    cleanups.push(() => listener.close())
    const client = createSandboxClient({ baseUrl: listener.url, apiKey: 'sk_sandbox_library_flow_types_1' })
    for (const body of [loanSteps[3], loanSteps[4]]) {
      const answer = await client.request({ method: 'POST', path: '/api/sandbox/loans/flow', body })
      expect(answer.status).toBe(400)
    }
    const loan = await client.createLoan({ collateral_btc: 0.5, loan_amount: 20_000 })
    for (const body of repaymentSteps.slice(4)) {
      const answer = await client.request({ method: 'POST', path: `/api/sandbox/loans/${loan.activeLoans[0]!.id}/repayment-flow`, body })
      expect(answer.status).toBe(400)
    }
  })

  it('checks a scenario file with the exported schema, as an editor or a pre-commit hook would', () => {
    const file = { name: 'n', description: 'd', steps: [{ request: { method: 'GET', path: '/api/sandbox/config', until_ms: 1000 } }] }
    expect(scenarioSchema.safeParse(file).success).toBe(true)
    const broken = scenarioSchema.safeParse({ ...file, steps: [{ request: { method: 'POST', path: '/api/sandbox/loans', until_ms: 1000 } }] })
    expect(broken.success).toBe(false)
    expect(broken.error?.issues.map((issue) => issue.message)).toContain('until_ms is for GET requests only: a POST or DELETE sent again would act again')
  })
})
