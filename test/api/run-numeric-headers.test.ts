import { describe, expect, it } from 'vitest'
import { parseScenario } from '../../src/scenarios/load-scenarios.js'
import { runScenarios } from '../../src/scenarios/run-scenarios.js'

describe('a webhook header holding a number', () => {
  it('is compared as a number by $gt and against a number, as an answer\'s header is', async () => {
    const file = parseScenario('numeric-webhook-header.json', JSON.stringify({
      name: 'n', description: 'd',
      steps: [
        { request: { method: 'POST', path: '/api/sandbox/webhooks', body: { url: '{{$receiver_url}}' } } },
        { request: { method: 'POST', path: '/api/sandbox/webhooks/test', body: {} } },
        { wait_for_webhook: { type: 'sandbox.webhook.test' }, expect: { headers: { 'x-service-webhook-timestamp': { $gt: 1_700_000_000 } } } },
      ],
    }))
    const report = await runScenarios([file])
    expect(report.scenarios[0]!.steps.flatMap((step) => step.failures.map((failure) => failure.message))).toEqual([])
    expect(report.scenarios[0]!.status).toBe('passed')
  })
})
