import { describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { FaultsConfig } from '../../src/faults/faults-schema.js'

// A rule whose path no route has never fires: a CI job "survived" a drop_after it never got.
// A partner whose base URL ends in /api/sandbox writes "/loans/flow" quite naturally.

async function startWith(rules: FaultsConfig['rules']): Promise<string> {
  try {
    const sandbox = await createSandbox({ storage: 'memory', faults: { rules }, faultsSource: '--faults faults.json' })
    await sandbox.close()
    return ''
  } catch (error) {
    return (error as Error).message
  }
}

describe('fault rules checked against the API\'s routes at start', () => {
  it('refuses a path no route has, with the one it most likely meant', async () => {
    expect(await startWith([{ path: '/loans/flow', fault: 'drop_after' }])).toBe('--faults faults.json is not a valid fault injection file: rules.0.path: no API route has the path /loans/flow, so the rule would never fault a request (did you mean /api/sandbox/loans/flow? API paths start with /api/sandbox)')
    expect(await startWith([{ fault: 'latency', ms: 1 }, { path: '/api/sandbox/loan/flow', fault: 'drop_after' }])).toBe('--faults faults.json is not a valid fault injection file: rules.1.path: no API route has the path /api/sandbox/loan/flow, so the rule would never fault a request (did you mean /api/sandbox/loans/flow?)')
    expect(await startWith([{ path: '/api/sandbox/loan*', fault: 'drop_before' }])).toBe('')
    expect(await startWith([{ path: '/api/sandbox/webhook/*', fault: 'drop_before' }])).toBe('--faults faults.json is not a valid fault injection file: rules.0.path: no API route has a path starting with /api/sandbox/webhook/, so the rule would never fault a request')
  })

  it('refuses a method the path\'s routes do not take', async () => {
    expect(await startWith([{ method: 'GET', path: '/api/sandbox/loans/flow', fault: 'status', status: 503 }])).toBe('--faults faults.json is not a valid fault injection file: rules.0.method: no API route answers GET /api/sandbox/loans/flow (its method: POST), so the rule would never fault a request')
  })

  it('accepts every path a request to a route can have: ids in place of parameters, prefixes, the whole API', async () => {
    const ok: FaultsConfig['rules'] = [
      { method: 'POST', path: '/api/sandbox/loans/loan_123/repayment-flow', fault: 'drop_after' },
      { path: '/api/sandbox/loans/loan_1*', fault: 'latency', ms: 1 },
      { method: 'DELETE', path: '/api/sandbox/webhooks', fault: 'status', status: 503 },
      { path: '/api/sandbox/*', fault: 'status', status: 500 },
      { path: '/*', fault: 'drop_before' },
      { method: 'GET', fault: 'drop_before' },
      // Never faulted, as the README says; not a mistake to refuse.
      { path: '/api/sandbox/openapi.json', fault: 'drop_before' },
    ]
    expect(await startWith(ok)).toBe('')
  })
})
