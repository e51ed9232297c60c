import { describe, expect, it } from 'vitest'
import { waitForWebhook } from '../../src/scenarios/wait-for-webhook.js'
import type { WebhookInbox } from '../../src/scenarios/webhook-inbox.js'
import { problemsOf } from '../helpers/scenario-problems.js'

const scenarioWaitingFor = (type: string) => JSON.stringify({
  name: 'n',
  description: 'd',
  steps: [
    { request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } }, capture: { kind: 'endpoint.url' } },
    { wait_for_webhook: { type } },
  ],
})

/** An inbox holding one delivery of an event of TYPE. */
function inboxWith(type: string): WebhookInbox {
  const delivery = { headers: {}, rawBody: JSON.stringify({ id: 'evt_1', type }), receivedAt: 0 }
  return { url: 'http://127.0.0.1:1', localUrl: 'http://127.0.0.1:1', next: () => Promise.resolve(delivery), close: () => Promise.resolve() }
}

describe('wait_for_webhook type', () => {
  it('refuses an event type that does not exist when the file is loaded, with the one a typo meant', () => {
    expect(problemsOf(scenarioWaitingFor('sandbox.loan.isued'))).toEqual([
      '2 wait_for_webhook.type: unknown event type "sandbox.loan.isued" (did you mean sandbox.loan.issued?)',
    ])
    expect(problemsOf(scenarioWaitingFor('loan.issuedd'))).toEqual([
      '2 wait_for_webhook.type: unknown event type "loan.issuedd" (did you mean sandbox.loan.issued?)',
    ])
    expect(problemsOf(scenarioWaitingFor('payment.done'))[0]).toMatch(/^2 wait_for_webhook\.type: unknown event type "payment\.done": one of sandbox\.loan_application\.updated, .*sandbox\.webhook\.test/)
  })

  it('leaves a type built from a variable to the run', () => {
    expect(() => problemsOf(scenarioWaitingFor('{{kind}}'))).toThrow('expected the scenario to be refused')
  })

  it('takes the short spelling for the event type it stands for, as the other commands do', async () => {
    const result = await waitForWebhook(inboxWith('sandbox.loan.issued'), '/hooks/1', { type: 'loan.issued' })
    expect(result.failures).toEqual([])
    const other = await waitForWebhook(inboxWith('sandbox.loan.updated'), '/hooks/1', { type: 'loan.issued' })
    expect(other.failures.map((failure) => failure.message)).toEqual(['the next delivery is sandbox.loan.updated, expected sandbox.loan.issued'])
  })
})

describe('wait_for_webhook without the receiver registered', () => {
  it('is refused when the file is loaded: no delivery can reach a receiver no earlier step sent', () => {
    const waits = { wait_for_webhook: { type: 'sandbox.webhook.test' } }
    const test = { request: { method: 'POST', path: '/api/sandbox/webhooks/test', body: {} } }
    const message = '2 wait_for_webhook: no earlier step sends {{$receiver_url}}, the runner\'s receiver (a URL of its own for each run of the scenario), so no delivery can reach this wait: register it first, e.g. POST /api/sandbox/webhooks with {"url": "{{$receiver_url}}"}'
    expect(problemsOf(JSON.stringify({ name: 'n', description: 'd', steps: [test, waits] }))).toEqual([message])
    // Registered after the wait is too late.
    const register = { request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } } }
    expect(problemsOf(JSON.stringify({ name: 'n', description: 'd', steps: [test, waits, register] }))).toEqual([message])
  })
})

describe('wait_for_webhook for an event the registered endpoint does not take', () => {
  const register = (events?: unknown, key?: string) => ({
    request: { method: 'POST', path: '/api/sandbox/webhooks', ...(key ? { key } : {}), body: { url: '{{$receiver_url}}', ...(events === undefined ? {} : { events }) } },
  })
  const scenario = (...steps: unknown[]) => JSON.stringify({ name: 'n', description: 'd', keys: ['other'], steps })

  it('is refused when the file is loaded, naming the step that registered it and its events', () => {
    // The server never delivers it, so the wait could only time out after timeout_ms.
    expect(problemsOf(scenario(register(['sandbox.loan.updated']), { wait_for_webhook: { type: 'loan.issued' } }))).toEqual([
      '2 wait_for_webhook.type: the endpoint step 1 registers takes only sandbox.loan.updated, so no sandbox.loan.issued is delivered to it: add it to that step\'s events (or leave events out for all)',
    ])
  })

  it('is no problem for events left out, a list holding it, the test event, a variable, or another key\'s endpoint that takes it', () => {
    const valid = [
      scenario(register(), { wait_for_webhook: { type: 'loan.issued' } }),
      scenario(register(['sandbox.loan.issued']), { wait_for_webhook: { type: 'loan.issued' } }),
      // A list the server refuses (a short name) fails at its own step, with the server's reason.
      scenario(register(['loan.updated']), { wait_for_webhook: { type: 'loan.issued' } }),
      scenario(register(['sandbox.loan.updated']), { wait_for_webhook: { type: 'webhook.test' } }),
      scenario({ request: { method: 'GET', path: '/api/sandbox/config' }, capture: { events: 'currencies' } }, register('{{events}}'), { wait_for_webhook: { type: 'loan.issued' } }),
      scenario(register(['sandbox.loan.updated']), register(['sandbox.loan.issued'], 'other'), { wait_for_webhook: { type: 'loan.issued' } }),
    ]
    for (const text of valid) expect(() => problemsOf(text), text).toThrow('expected the scenario to be refused')
  })

  it('follows the latest registration of a key', () => {
    expect(problemsOf(scenario(register(), register(['sandbox.loan.updated']), { wait_for_webhook: { type: 'loan.issued' } }))[0])
      .toMatch(/^3 wait_for_webhook\.type: the endpoint step 2 registers takes only sandbox\.loan\.updated/)
  })
})
