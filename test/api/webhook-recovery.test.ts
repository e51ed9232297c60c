import { describe, expect, it } from 'vitest'
import { MAX_IN_FLIGHT_PER_DESTINATION } from '../../src/webhooks/destination-gates.js'
import { createTestApi, newKey, type TestApi } from '../helpers/api.js'
import { findClosedPort, startReceiver, type TestReceiver } from '../helpers/receiver.js'

const KEYS = 300
const EVENTS_PER_KEY = 3

/** Makes EVENTS_PER_KEY loans on each of KEYS new keys: loan id -> [key, its place among the key's loans]. */
async function queueBacklog(api: TestApi): Promise<Map<string, [string, number]>> {
  const loans = new Map<string, [string, number]>()
  for (const key of Array.from({ length: KEYS }, () => newKey())) {
    for (let i = 0; i < EVENTS_PER_KEY; i++) {
      const answer = await api.call('POST', '/api/sandbox/loans', { key, body: { collateral_btc: 0.005, loan_amount: 100 } })
      expect(answer.status).toBe(200)
      loans.set(answer.body.activeLoans.at(-1).id as string, [key, i])
    }
  }
  return loans
}

describe('a forward receiver that comes back after an outage', () => {
  it('gets the backlog of every key with no more than the cap in flight, each key\'s events in order', async () => {
    const port = await findClosedPort()
    const api = await createTestApi({ webhookForwardTo: `http://127.0.0.1:${port}/forward`, webhookRetrySchedule: Array(10).fill(300) })
    let receiver: TestReceiver | undefined
    try {
      const loans = await queueBacklog(api)
      // A dev server that takes a moment per delivery: without a cap, every waiting key's delivery
      // was in flight at once.
      receiver = await startReceiver('/forward', port)
      receiver.delayMs = 20
      const received = await receiver.waitFor(KEYS * EVENTS_PER_KEY, 20_000)
      await api.sandbox.deliveriesIdle()

      expect(receiver.peakInFlight).toBeGreaterThan(1)
      expect(receiver.peakInFlight).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_DESTINATION)
      // The connections kept for the sends, and the probes of keys whose retry falls due meanwhile
      // (one per turn while every kept connection is busy, closed at once).
      expect(receiver.peakConnections).toBeLessThanOrEqual(MAX_IN_FLIGHT_PER_DESTINATION + 3)
      // Every event once, and each key's in the order they happened.
      const byKey = new Map<string, number[]>()
      for (const { body } of received) {
        const [key, place] = loans.get(JSON.parse(body).data.object.id as string)!
        byKey.set(key, [...(byKey.get(key) ?? []), place])
      }
      expect(received).toHaveLength(KEYS * EVENTS_PER_KEY)
      expect(byKey.size).toBe(KEYS)
      for (const places of byKey.values()) expect(places).toEqual([0, 1, 2])
    } finally {
      await api.sandbox.close()
      await receiver?.close()
    }
  }, 60_000)
})
