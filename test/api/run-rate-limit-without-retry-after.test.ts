import { describe, expect, it } from 'vitest'
import { parseScenario, runScenarios } from '../../src/scenarios/index.js'
import { useProxiedSandbox } from '../helpers/reverse-proxy.js'

// The spec names no Retry-After on its 429: a hosted sandbox, or a CDN's rate limit in front of
// it, may send only RateLimit-* headers, or none. The step's note must not claim a wait it did not get.

const upstreamSandbox = useProxiedSandbox()
const config = parseScenario('config.json', JSON.stringify({ name: 'config', description: 'd', steps: [{ request: { method: 'GET', path: '/api/sandbox/config' } }] }))

describe('a 429 without Retry-After', () => {
  it('fails the step with a note saying no Retry-After was given and the retries waited 1 s, naming RateLimit-Reset', async () => {
    const limited = await upstreamSandbox.proxy({ handler: (_request, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'ratelimit-limit': '120', 'ratelimit-remaining': '0', 'ratelimit-reset': '42' })
      response.end(JSON.stringify({ request_id: 'req_1', error_code: 'SANDBOX_RATE_LIMIT_EXCEEDED', error: 'Too many requests.' }))
    } })
    const report = await runScenarios([config], { baseUrl: limited.url })
    expect(limited.requests).toHaveLength(4)
    expect(report.scenarios[0]!.steps[0]).toMatchObject({
      status: 429,
      ok: false,
      note: 'still rate limited after 4 attempts: the 429 named no Retry-After, so each retry waited 1 s (RateLimit-Reset said 42 s); run again later (another client may be using this key)',
    })
  })
})
