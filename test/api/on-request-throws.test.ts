import { describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/index.js'

describe('createSandbox({ onRequest }) whose callback throws (a test\'s expect inside it)', () => {
  it('answers the request as carried out and hands the error to logError', async () => {
    const logged: unknown[] = []
    const sandbox = await createSandbox({ onRequest: () => { throw new Error('expected 201, got 200') }, logError: (error) => logged.push(error) })
    try {
      const answer = await sandbox.fetch(new Request('http://127.0.0.1/api/sandbox/loans/flow', {
        method: 'POST',
        headers: { authorization: 'Bearer sk_sandbox_on_request_throws_1', 'content-type': 'application/json', 'idempotency-key': 'on-request-throws-1' },
        body: JSON.stringify({ action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 10_000, loan_currency: 'USDT' }),
      }))
      // Before: an empty 500 for a step that was carried out.
      expect(answer.status).toBe(200)
      expect((await answer.json()).draft.status).toBe('awaiting_collateral')
      expect(logged).toEqual([new Error('expected 201, got 200')])
    } finally {
      await sandbox.close()
    }
  })
})
