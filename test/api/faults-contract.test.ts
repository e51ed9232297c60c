import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { listenSandbox } from '../../src/server/listen.js'
import type { FaultsConfig } from '../../src/faults/faults-schema.js'
import { checkAnswerAgainstContract } from '../helpers/contract.js'
import { LOAN, newKey } from '../helpers/api.js'

// A partner who puts a validating proxy (Stoplight Prism) between their client and
// `serve --faults` sees every injected answer checked against the document: each must be declared.
// The 502/504 pages are a gateway's, not the API's, and stay out of it: a text/html or bodiless
// error response would loosen the error type of generated clients (test/e2e/openapi.test.ts).
let cleanup: (() => Promise<void>) | undefined
afterEach(async () => {
  await cleanup?.()
  cleanup = undefined
})

const RULES: FaultsConfig['rules'] = [
  { method: 'GET', path: '/api/sandbox/config', fault: 'status', status: 500, retry_after: 2 },
  { method: 'GET', path: '/api/sandbox/state', fault: 'status', status: 503, retry_after: 2 },
  { method: 'DELETE', path: '/api/sandbox/webhooks', fault: 'status', status: 503 },
  { method: 'POST', path: '/api/sandbox/loans/flow', fault: 'status', status: 500 },
]

describe('answers of serve --faults, against the OpenAPI document', () => {
  it('declares the 500 and 503 SANDBOX_FAULT_INJECTED, with Retry-After, on the operations that answer them', async () => {
    const sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {}, faults: { seed: 1, rules: RULES } })
    const listener = await listenSandbox(sandbox)
    cleanup = async () => {
      await listener.close()
      await sandbox.close()
    }
    const key = newKey('faultcontract')
    const problems: string[] = []
    const statuses: number[] = []
    for (const rule of RULES) {
      const post = rule.method === 'POST'
      const path = rule.path!
      const response = await fetch(`${listener.url}${path}`, {
        method: rule.method,
        headers: { authorization: `Bearer ${key}`, ...(post ? { 'content-type': 'application/json', 'idempotency-key': randomUUID() } : {}) },
        body: post ? JSON.stringify(LOAN) : undefined,
      })
      statuses.push(response.status)
      problems.push(...checkAnswerAgainstContract(rule.method!, path, response.status, response.headers, await response.text()))
    }
    expect(statuses).toEqual([500, 503, 503, 500])
    expect(problems).toEqual([])
  })
})
