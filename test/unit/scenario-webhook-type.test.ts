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
