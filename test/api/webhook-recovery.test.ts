import { afterEach, describe, expect, it } from 'vitest'
import { MAX_IN_FLIGHT_PER_DESTINATION } from '../../src/webhooks/destination-gates.js'
import { createTestApi, newKey, type TestApi } from '../helpers/api.js'
import { findClosedPort, startReceiver, type TestReceiver } from '../helpers/receiver.js'

let api: TestApi | undefined
let receiver: TestReceiver | undefined
afterEach(async () => {
  await api?.sandbox.close()
  await receiver?.close()
  api = undefined
  receiver = undefined
})

const KEYS = 300
const EVENTS_PER_KEY = 3

describe('a forward receiver that comes back after an outage', () => {
  it('gets the backlog of every key with no more than the cap in flight, each key\'s events in order', async () => {
    const port = await findClosedPort()
    api = await createTestApi({ webhookForwardTo: `http://127.0.0.1:${port}/forward`, webhookRetrySchedule: Array(10).fill(300) })
    const target = api
    // Loan id -> [key, its place among the key's loans].
    const loans = new Map<string, [string, number]>()
    const keys = Array.from({ length: KEYS }, () => newKey())
    for (const key of keys) {
      for (let i = 0; i < EVENTS_PER_KEY; i++) {
        const answer = await target.call('POST', '/api/sandbox/loans', { key, body: { collateral_btc: 0.005, loan_amount: 100 } })
        expect(answer.status).toBe(200)
        loans.set(answer.body.activeLoans.at(-1).id as string, [key, i])
      }
    }

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
  }, 60_000)
})
