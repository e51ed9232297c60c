import { afterEach, describe, expect, it } from 'vitest'
import { MAX_IN_FLIGHT_PER_DESTINATION } from '../../src/webhooks/destination-gates.js'
import { createTestApi, newKey } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

let receiver: TestReceiver | undefined
afterEach(async () => {
  await receiver?.close()
  receiver = undefined
})

const TIMEOUT_MS = 1500

describe('stopping while deliveries wait for a place in flight', () => {
  it('sends none of the waiting ones and waits only for those in flight (one delivery timeout, not one per 16 keys)', async () => {
    // A forward receiver that takes every delivery and never answers: each one in flight holds
    // its place for the whole timeout.
    receiver = await startReceiver('/forward')
    receiver.delayMs = 60_000
    const api = await createTestApi({ webhookForwardTo: receiver.url, webhookTimeoutMs: TIMEOUT_MS })
    const keys = Array.from({ length: 3 * MAX_IN_FLIGHT_PER_DESTINATION }, () => newKey())
    for (const key of keys) {
      expect((await api.call('POST', '/api/sandbox/loans', { key, body: { collateral_btc: 0.005, loan_amount: 100 } })).status).toBe(200)
    }
    await receiver.waitFor(MAX_IN_FLIGHT_PER_DESTINATION)
    const sentBeforeStop = receiver.received.length

    const started = performance.now()
    await api.sandbox.close()
    const stopMs = performance.now() - started

    // Sends still waiting for a place when the stop began are not started (they stay pending and
    // go out after a restart), so the stop holds for the deliveries in flight only.
    expect(receiver.received.length).toBe(sentBeforeStop)
    expect(stopMs).toBeLessThan(2 * TIMEOUT_MS)
  }, 30_000)
})
