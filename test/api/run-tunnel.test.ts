import { afterEach, describe, expect, it } from 'vitest'
import { loadScenarios, parseScenario, SHIPPED_SCENARIOS_DIR } from '../../src/scenarios/load-scenarios.js'
import { runScenarios } from '../../src/scenarios/run-scenarios.js'
import { createTestApi, listenTestApi } from '../helpers/api.js'
import { findFreePort } from '../helpers/free-port.js'
import { answerHtml, startReverseProxy } from '../helpers/reverse-proxy.js'

// The webhook scenarios against a sandbox on "another machine": `remote: true` stands for a base
// URL that is not loopback (everything here stays on 127.0.0.1), and a reverse proxy on
// 127.0.0.1 stands for the tunnel (ngrok, cloudflared) that forwards to the runner's receiver.

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A server that delivers to local URLs (as the tunnel's public URL is, here). */
async function startServer(options: { allowLocalWebhooks?: boolean } = {}): Promise<string> {
  const api = await createTestApi({ allowLocalWebhooks: options.allowLocalWebhooks ?? true })
  const listener = await listenTestApi(api.sandbox)
  cleanups.push(async () => { await listener.close(); await api.sandbox.close() })
  return listener.url
}

/** A tunnel whose public URL is `<proxy>/tun`, forwarding to 127.0.0.1:port with the prefix stripped (or kept). */
async function startTunnel(port: number, options: { keepPrefix?: boolean; down?: boolean } = {}) {
  const tunnel = await startReverseProxy(`http://127.0.0.1:${port}`, {
    ...(options.keepPrefix ? {} : { stripPrefix: '/tun' }),
    // ngrok's answer when nothing listens behind it.
    ...(options.down ? { handler: (_request, response) => answerHtml(response, 502) } : {}),
  })
  cleanups.push(() => tunnel.close())
  return { ...tunnel, publicUrl: `${tunnel.url}/tun` }
}

const shipped = async (filter: (tags: string[], id: string) => boolean) => (await loadScenarios(SHIPPED_SCENARIOS_DIR)).filter((s) => filter(s.tags, s.id))

describe('sandbox run --receiver-port/--receiver-url: webhook scenarios through a tunnel', () => {
  it('the shipped webhook scenarios pass against a remote server through the tunnel; without it they are skipped, as before', async () => {
    const baseUrl = await startServer()
    const port = await findFreePort()
    const tunnel = await startTunnel(port)
    const scenarios = await shipped((tags) => tags.includes('local-only'))
    const started: unknown[] = []
    const report = await runScenarios(scenarios, { baseUrl, remote: true, receiverPort: port, receiverUrl: tunnel.publicUrl, onReceiverStart: (receiver) => started.push(receiver) })
    expect(report.scenarios.map((s) => [s.id, s.status, s.steps.find((step) => !step.ok)?.failures ?? s.error])).toEqual([
      ['key-isolation', 'skipped', 'local-only: needs a sandbox on this machine (use --tag local-only to run it anyway)'],
      ['ltv-and-balance-limits', 'skipped', 'local-only: needs a sandbox on this machine (use --tag local-only to run it anyway)'],
      ['partner-deals-and-rewards', 'skipped', 'local-only: needs a sandbox on this machine (use --tag local-only to run it anyway)'],
      ['webhook-events-rules', 'passed', undefined],
      ['webhook-loan-events', 'passed', undefined],
      ['webhook-test-event', 'passed', undefined],
    ])
    // Said once, before the first scenario: where the receiver listens and what reaches it.
    expect(started).toEqual([{ localUrl: `http://127.0.0.1:${port}`, publicUrl: tunnel.publicUrl }])
    // Every delivery came in through the tunnel, on the scenario's path under the prefix.
    const deliveries = tunnel.requests.filter((request) => request.method === 'POST')
    expect(deliveries.length).toBeGreaterThanOrEqual(8)
    expect(deliveries.every((request) => /^\/tun\/hooks\/[0-9a-f]{12}$/.test(request.path))).toBe(true)

    const without = await runScenarios(scenarios.filter((s) => s.tags.includes('webhooks')), { baseUrl, remote: true })
    expect(without.scenarios.map((s) => [s.status, s.error])).toEqual([
      ['skipped', "local-only: needs a sandbox on this machine (use --tag local-only to run it anyway, or --receiver-url for a tunnel to the runner's receiver)"],
      ['skipped', "local-only: needs a sandbox on this machine (use --tag local-only to run it anyway, or --receiver-url for a tunnel to the runner's receiver)"],
      ['skipped', "local-only: needs a sandbox on this machine (use --tag local-only to run it anyway, or --receiver-url for a tunnel to the runner's receiver)"],
    ])
    expect(without.requests).toBe(0)
  })

  it('a tunnel that keeps its path prefix reaches the scenario too', async () => {
    const baseUrl = await startServer()
    const port = await findFreePort()
    const tunnel = await startTunnel(port, { keepPrefix: true })
    const report = await runScenarios(await shipped((_tags, id) => id === 'webhook-test-event'), { baseUrl, remote: true, receiverPort: port, receiverUrl: tunnel.publicUrl })
    expect(report.scenarios.map((s) => [s.status, s.steps.find((step) => !step.ok)?.failures])).toEqual([['passed', undefined]])
    // The receiver got /tun/hooks/<run>, prefix and all, and took it for the scenario's.
    expect(tunnel.requests.filter((request) => request.method === 'POST').map((request) => request.path)).toEqual([expect.stringMatching(/^\/tun\/hooks\/[0-9a-f]{12}$/)])
  })

  it('a wait that gets nothing through the tunnel says so, naming where it must forward to', async () => {
    const baseUrl = await startServer()
    const port = await findFreePort()
    const tunnel = await startTunnel(port, { down: true })
    const waiting = parseScenario('tunnel-down.json', JSON.stringify({
      name: 'tunnel down', description: 'the test event never arrives', tags: ['webhooks', 'local-only'],
      steps: [
        { request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } } },
        { request: { method: 'POST', path: '/api/sandbox/webhooks/test', body: {} } },
        { wait_for_webhook: { type: 'sandbox.webhook.test', timeout_ms: 300 } },
      ],
    }))
    const report = await runScenarios([waiting], { baseUrl, remote: true, receiverPort: port, receiverUrl: tunnel.publicUrl })
    expect(report.scenarios[0]!.steps[2]).toMatchObject({
      ok: false,
      failures: [expect.objectContaining({ message: 'no delivery of sandbox.webhook.test within 300 ms' })],
      note: `nothing arrived through the tunnel within 300 ms: check that it is running and forwards ${tunnel.publicUrl}/* to 127.0.0.1:${port} (the receiver's address on this machine); the server's delivery log (GET /api/sandbox/webhooks) shows what its attempts got`,
    })
    // The server did try: through the tunnel, which answered 502.
    expect(tunnel.requests.some((request) => request.path.startsWith('/tun/hooks/'))).toBe(true)
  })

  it('a server that refuses the receiver URL as an endpoint: the note names --receiver-url and the server\'s reason', async () => {
    const baseUrl = await startServer({ allowLocalWebhooks: false })
    const port = await findFreePort()
    const tunnel = await startTunnel(port)
    const report = await runScenarios(await shipped((_tags, id) => id === 'webhook-test-event'), { baseUrl, remote: true, receiverPort: port, receiverUrl: tunnel.publicUrl })
    expect(report.scenarios[0]!.steps[0]).toMatchObject({ ok: false, status: 400, error_code: 'WEBHOOK_URL_INVALID' })
    expect(report.scenarios[0]!.steps[0]!.note).toMatch(new RegExp(`^the server refuses --receiver-url ${tunnel.publicUrl.replace(/[.]/g, '\\.')} as an endpoint \\(The URL must use https:// \\(got http:\\)\\..*\\): a sandbox that keeps the spec takes only a public https:// URL, such as the tunnel's own$`))
  })

  it('a busy --receiver-port fails the run before any scenario, and an in-process server it started is stopped', async () => {
    const blocker = await startReverseProxy('http://127.0.0.1:9')
    cleanups.push(() => blocker.close())
    const port = Number(new URL(blocker.url).port)
    const scenarios = await shipped((_tags, id) => id === 'webhook-test-event')
    let requests = 0
    await expect(runScenarios(scenarios, { receiverPort: port, transport: { onAttempt: () => { requests++ } } })).rejects.toMatchObject({ code: 'EADDRINUSE', port, host: '127.0.0.1' })
    expect(requests).toBe(0)
  })
})
