import { afterEach, describe, expect, it } from 'vitest'
import { parseScenario } from '../../src/scenarios/load-scenarios.js'
import { runScenarios } from '../../src/scenarios/run-scenarios.js'
import { startRunServer } from '../../src/scenarios/run-server.js'
import type { ScenarioReport } from '../../src/scenarios/report-types.js'
import { startSilentServer } from '../helpers/silent-server.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const scenario = (id: string, steps: unknown[]) => parseScenario(`${id}.json`, JSON.stringify({ name: id, description: id, steps }))

/** Registers the runner's receiver, then waits a minute for an event nothing sends. */
const waitsForWebhook = scenario('waits', [
  { name: 'register', request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } }, expect: { status: 200 } },
  { name: 'never comes', wait_for_webhook: { type: 'sandbox.webhook.test', timeout_ms: 60_000 } },
])
const readsConfig = scenario('reads', [{ request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status: 200 } }])

describe('runScenarios with a signal', () => {
  it('aborted in a wait_for_webhook step: rejects with the reason, reports no scenario, stops its server and receiver', async () => {
    const controller = new AbortController()
    const reason = new Error('draft.json changed')
    const ended: ScenarioReport[] = []
    const urls: string[] = []
    const run = runScenarios([waitsForWebhook, readsConfig], {
      signal: controller.signal,
      transport: { onAttempt: (request, _answer, wire) => urls.push(wire.url, ...(request.body ? [(request.body as { url: string }).url] : [])) },
      // The wait begins as soon as the step before it is told.
      onStep: (_scenario, step) => { if (step.name === 'register') setTimeout(() => controller.abort(reason), 50) },
      onScenarioEnd: (report) => ended.push(report),
    })
    await expect(run).rejects.toBe(reason)
    expect(ended).toEqual([])
    // The in-process server the run started, and the receiver registered with it, are gone.
    const [serverUrl, receiverUrl] = urls
    expect(serverUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/sandbox\/webhooks$/)
    expect(receiverUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\//)
    await expect(fetch(serverUrl!)).rejects.toThrow()
    await expect(fetch(receiverUrl!, { method: 'POST', body: '{}' })).rejects.toThrow()
  })

  it('aborted while a server never answers: the request is dropped, not retried or told as a failure', async () => {
    const silent = await startSilentServer()
    cleanups.push(silent.close)
    const controller = new AbortController()
    const told: string[] = []
    const run = runScenarios([readsConfig], {
      baseUrl: silent.url,
      signal: controller.signal,
      transport: { onAttempt: () => told.push('attempt'), onRetryWait: () => told.push('retry wait') },
      onScenarioEnd: () => told.push('scenario end'),
    })
    await expect.poll(silent.requests).toBe(1)
    controller.abort()
    await expect(run).rejects.toMatchObject({ name: 'AbortError' })
    // The connection the request was waiting on is closed by the client, not left to its 10 s timeout.
    await expect.poll(silent.dropped).toBe(1)
    expect(told).toEqual([])
    expect(silent.requests()).toBe(1)
  })

  it('a run after an aborted one on the same in-process server passes, with none of the first one\'s state', async () => {
    const server = await startRunServer()
    cleanups.push(() => server.close())
    const controller = new AbortController()
    const apiKey = 'sk_sandbox_run_cancel_test_key_1'
    const first = runScenarios([waitsForWebhook], { server, apiKey, signal: controller.signal, onStep: () => setTimeout(() => controller.abort(), 50) })
    await expect(first).rejects.toMatchObject({ name: 'AbortError' })
    // The key's endpoint still points at the first run's receiver, which is closed: the test event to it
    // goes nowhere, and the second run's own registration and wait see only its own event.
    const second = await runScenarios([scenario('again', [
      { request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } }, expect: { status: 200 } },
      { request: { method: 'POST', path: '/api/sandbox/webhooks/test', body: {} }, expect: { status: 200 }, capture: { id: 'event.id' } },
      { wait_for_webhook: { type: 'sandbox.webhook.test', timeout_ms: 10_000 }, expect: { body: { id: '{{id}}' } } },
    ])], { server, apiKey })
    expect(second).toMatchObject({ passed: 1, failed: 0 })
  })

  it('aborted in a drop_answer step while the server has not answered: rejects with the reason, the connection closed, nothing told', async () => {
    const silent = await startSilentServer()
    cleanups.push(silent.close)
    const controller = new AbortController()
    const reason = new Error('draft.json changed')
    const told: string[] = []
    const drops = scenario('drops', [{ request: { method: 'POST', path: '/api/sandbox/loans', body: {}, drop_answer: true } }])
    const run = runScenarios([drops], {
      baseUrl: silent.url,
      signal: controller.signal,
      // Far past the test's timeout: a step that ignored the signal would end the test by it.
      transport: { timeoutMs: 60_000, onAttempt: () => told.push('attempt') },
      onScenarioEnd: () => told.push('scenario end'),
    })
    await expect.poll(silent.requests).toBe(1)
    controller.abort(reason)
    await expect(run).rejects.toBe(reason)
    await expect.poll(silent.dropped).toBe(1)
    expect(told).toEqual([])
  })

  it('with a signal already aborted: rejects with its reason and starts nothing, not even the receiver', async () => {
    const reason = new Error('cancelled before it began')
    const told: string[] = []
    const run = runScenarios([waitsForWebhook, readsConfig], {
      signal: AbortSignal.abort(reason),
      receiverPort: 0,
      onReceiverStart: () => told.push('receiver start'),
      onScenarioStart: (started) => told.push(`start ${started.id}`),
      onScenarioEnd: (report) => told.push(`end ${report.id}`),
    })
    await expect(run).rejects.toBe(reason)
    expect(told).toEqual([])
  })

  it('aborted as a scenario ends: rejects with the reason and starts no later scenario', async () => {
    const controller = new AbortController()
    const reason = new Error('draft.json changed')
    const told: string[] = []
    const run = runScenarios([readsConfig, scenario('later', [{ request: { method: 'GET', path: '/api/sandbox/config' }, expect: { status: 200 } }])], {
      signal: controller.signal,
      onScenarioStart: (started) => told.push(`start ${started.id}`),
      onScenarioEnd: (report) => {
        told.push(`end ${report.id}`)
        controller.abort(reason)
      },
    })
    await expect(run).rejects.toBe(reason)
    expect(told).toEqual(['start reads', 'end reads'])
  })

  it('aborted while it waits for a server that does not answer yet (waitForServerMs): rejects with the reason, reports nothing', async () => {
    const silent = await startSilentServer()
    cleanups.push(silent.close)
    const controller = new AbortController()
    const reason = new Error('draft.json changed')
    const told: string[] = []
    // A minute's wait, far past the test's timeout: a wait that ignored the signal would end the test by it.
    const run = runScenarios([readsConfig], { baseUrl: silent.url, waitForServerMs: 60_000, signal: controller.signal, onScenarioStart: () => told.push('scenario start') })
    await expect.poll(silent.requests).toBe(1)
    controller.abort(reason)
    await expect(run).rejects.toBe(reason)
    expect(told).toEqual([])
  })
})
