import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
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
    // This sandbox refuses half a character in a body, so another server of the API echoes it here.
    const paths: string[] = []
    const server = createServer((request, response) => {
      paths.push(request.url!)
      request.resume().on('end', () => {
        const found = request.url === '/api/sandbox/partner'
        response.writeHead(found ? 200 : 404, { 'content-type': 'application/json', 'x-request-id': 'req_1' })
        response.end(found ? '{"request_id":"req_1","profile":{"name":"x\\ud800"}}' : '{"request_id":"req_1","error_code":"LOAN_NOT_FOUND","error":"No such loan."}')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const file = parseScenario('lone-surrogate.json', JSON.stringify({
        name: 'n', description: 'd',
        steps: [
          { request: { method: 'POST', path: '/api/sandbox/partner', body: { name: 'x' } }, capture: { odd: 'profile.name' } },
          { request: { method: 'POST', path: '/api/sandbox/loans/{{odd}}/action', body: { action: 'repay_interest', amount: 1 } }, expect: { status: 404, error_code: 'LOAN_NOT_FOUND' } },
        ],
      }))
      const report = await runScenarios([file], { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'sk_sandbox_lone_surrogate_0001' })
      expect(report.scenarios[0]!.error).toBeUndefined()
      expect(report.scenarios[0]!.steps[1]!.path).toBe('/api/sandbox/loans/x%EF%BF%BD/action')
      expect(paths.at(-1)).toBe('/api/sandbox/loans/x%EF%BF%BD/action')
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
