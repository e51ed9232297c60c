import { beforeAll, describe, expect, it } from 'vitest'
import { loadScenarios, runScenarios, SHIPPED_SCENARIOS_DIR, type Scenario } from '../../src/scenarios/index.js'
import { useProxiedSandbox } from '../helpers/reverse-proxy.js'

// An API gateway in front of a hosted sandbox that passes on only the headers it knows drops
// Idempotency-Key: every POST gets 400 IDEMPOTENCY_KEY_REQUIRED though the run sent a key.

const upstreamSandbox = useProxiedSandbox()
let directLoan: Scenario

beforeAll(async () => {
  directLoan = (await loadScenarios(SHIPPED_SCENARIOS_DIR)).find((scenario) => scenario.id === 'direct-loan')!
})

describe('a proxy that drops the Idempotency-Key header', () => {
  it('fails the POST with a note saying the key was sent and most likely dropped on the way', async () => {
    const gateway = await upstreamSandbox.proxy({ handler: (request, _response, forward) => {
      delete request.headers['idempotency-key']
      forward()
    } })
    const report = await runScenarios([directLoan], { baseUrl: gateway.url })
    const step = report.scenarios[0]!.steps.find((candidate) => !candidate.ok)!
    expect(step).toMatchObject({
      method: 'POST',
      status: 400,
      error_code: 'IDEMPOTENCY_KEY_REQUIRED',
      note: 'the server got no Idempotency-Key although the run sent one; is a proxy or API gateway in between dropping the header?',
    })
    expect(step.sent!.idempotency_key).toMatch(/^run-/)
  })
})
