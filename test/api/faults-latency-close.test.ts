import { describe, expect, it } from 'vitest'
import { createSandbox, createSandboxClient, listenSandbox } from '../../src/index.js'

const KEY = 'sk_sandbox_latency_close_key_01'
const START = { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 10_000, loan_currency: 'USDT' } as const

// A minute of latency, against the test's 20 s: before, the wait ran on after close() and kept
// the process (a test runner's worker) alive for the rest of it.
const FAULTS = { seed: 1, rules: [{ fault: 'latency' as const, ms: 60_000 }] }

describe('close() of a sandbox with requests waiting out a latency fault', () => {
  it('answers an in-process request at once, as the wait ends with the sandbox', async () => {
    const sandbox = await createSandbox({ faults: FAULTS })
    const answer = sandbox.fetch(new Request('http://127.0.0.1/api/sandbox/loans/flow', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': 'latency-close-1' },
      body: JSON.stringify(START),
    }))
    await new Promise((resolve) => setTimeout(resolve, 100))
    await sandbox.close()
    expect((await answer).status).toBe(200)
  })

  it('answers a request through its listener before closing it, rather than cutting it', async () => {
    const sandbox = await createSandbox({ faults: FAULTS })
    const listener = await listenSandbox(sandbox)
    const client = createSandboxClient({ baseUrl: listener.url, apiKey: KEY, retries: 0 })
    const answer = client.loanFlow(START)
    await expect.poll(() => sandbox.storage.getKeys().then((keys) => keys.length), { timeout: 10_000 }).toBeGreaterThan(0)
    await sandbox.close()
    expect((await answer).draft?.status).toBe('awaiting_collateral')
    await listener.close()
  })

  it('holds many requests at once without a MaxListenersExceededWarning', async () => {
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    const sandbox = await createSandbox({ faults: { seed: 1, rules: [{ fault: 'latency', ms: 200 }] }, rateLimit: false })
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => sandbox.fetch(new Request('http://127.0.0.1/api/sandbox/state', { headers: { authorization: `Bearer ${KEY}${i}` } }))))
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200))
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning')
    } finally {
      process.off('warning', onWarning)
      await sandbox.close()
    }
  })
})
