import { describe, expect, it } from 'vitest'
import { parseScenario } from '../../src/scenarios/load-scenarios.js'
import { runScenarios } from '../../src/scenarios/run-scenarios.js'

describe('a variable in a request path', () => {
  it('is sent as one path segment, escaped as the client library escapes a loan id, whatever its characters', async () => {
    // The spec does not fix the ids' format; before, "/", "?" and "#" in a value cut the path short
    // (404 NOT_FOUND "No such endpoint") while the report showed the path unescaped.
    const id = 'a b/c?d#e%20f ü'
    const file = parseScenario('path-variable.json', JSON.stringify({
      name: 'n', description: 'd',
      steps: [
        { request: { method: 'POST', path: '/api/sandbox/partner', body: { name: id } }, capture: { odd: 'profile.name' } },
        {
          request: { method: 'POST', path: '/api/sandbox/loans/{{odd}}/action', body: { action: 'repay_interest', amount: 1 } },
          expect: { status: 404, error_code: 'LOAN_NOT_FOUND', body: { 'details.loan_id': id } },
        },
      ],
    }))
    const report = await runScenarios([file])
    const step = report.scenarios[0]!.steps[1]!
    expect(step.failures).toEqual([])
    expect(step.path).toBe(`/api/sandbox/loans/${encodeURIComponent(id)}/action`)
  })

  it('sends a lone surrogate (a JSON "\\ud800") as U+FFFD rather than failing the step on it', async () => {
    const file = parseScenario('lone-surrogate.json', JSON.stringify({
      name: 'n', description: 'd',
      steps: [
        { request: { method: 'POST', path: '/api/sandbox/partner', body: { name: 'x\ud800' } }, capture: { odd: 'profile.name' } },
        { request: { method: 'POST', path: '/api/sandbox/loans/{{odd}}/action', body: { action: 'repay_interest', amount: 1 } }, expect: { status: 404, error_code: 'LOAN_NOT_FOUND' } },
      ],
    }))
    const report = await runScenarios([file])
    expect(report.scenarios[0]!.error).toBeUndefined()
    expect(report.scenarios[0]!.steps[1]!.path).toBe('/api/sandbox/loans/x%EF%BF%BD/action')
  })
})
