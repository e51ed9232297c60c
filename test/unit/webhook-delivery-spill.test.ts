import { describe, expect, it } from 'vitest'
import type { SandboxEvent } from '../../src/domain/types.js'
import { createWebhookState, enqueueEvents, findHead, recordAttempt, type TargetInfo } from '../../src/webhooks/deliveries.js'
import { hasUndelivered } from '../../src/webhooks/waiting-deliveries.js'
import { findDueRun, KEEP_NEWEST, KEEP_OLDEST, restoreRun, SPILL_MIN, spillDeliveries } from '../../src/webhooks/delivery-spill.js'
import type { Delivery, WebhookState } from '../../src/webhooks/types.js'

const NOW = '2026-11-22T10:00:00.000Z'
const FORWARD: TargetInfo = { target: 'forward', url: 'http://127.0.0.1:3000/hook', secret: 'whsec_x' }
let nextId = 0
const newId = (prefix: string) => `${prefix}_${++nextId}`

function enqueue(state: WebhookState, count: number): WebhookState {
  const events = Array.from({ length: count }, () => ({ id: newId('evt'), type: 'sandbox.loan.issued', created_at: NOW, api_version: '0.3.0', data: { object: {} } }) as unknown as SandboxEvent)
  return enqueueEvents(state, events, [FORWARD], NOW, newId)
}

const deliver = (state: WebhookState, delivery: Delivery) => recordAttempt(state, delivery.id, { statusCode: 200, error: null, durationMs: 1 }, [10], Date.parse(NOW))

/** Delivers heads one by one as the dispatcher would, restoring spilled runs when their turn comes. */
function drain(state: WebhookState, batches: Map<number, Delivery[]>): { state: WebhookState; order: number[] } {
  const order: number[] = []
  for (;;) {
    const run = findDueRun(state, 'forward')
    if (run) {
      state = restoreRun(state, run, batches.get(run.batch)!)
      continue
    }
    const head = findHead(state, 'forward')
    if (!head) return { state, order }
    order.push(head.seq!)
    state = deliver(state, head)
    const spill = spillDeliveries(state)
    for (const { batch, deliveries } of spill.batches) batches.set(batch, deliveries)
    state = spill.state
  }
}

describe('spilling a long webhook backlog out of the session document', () => {
  it('leaves short queues alone', () => {
    const state = enqueue(createWebhookState(), KEEP_OLDEST + KEEP_NEWEST + SPILL_MIN - 1)
    expect(spillDeliveries(state)).toEqual({ state, batches: [] })
  })

  it('moves the middle out, keeping the front and the newest, and delivers everything in order once', () => {
    let state = createWebhookState()
    const batches = new Map<number, Delivery[]>()
    for (let i = 0; i < 10; i++) {
      state = enqueue(state, 100)
      const spill = spillDeliveries(state)
      for (const { batch, deliveries } of spill.batches) batches.set(batch, deliveries)
      state = spill.state
      // The document never holds more than the front, the newest and one run's worth.
      expect(state.deliveries.length).toBeLessThan(KEEP_OLDEST + KEEP_NEWEST + SPILL_MIN + 100)
    }
    expect(state.deliveries.slice(0, KEEP_OLDEST).map((delivery) => delivery.seq)).toEqual(Array.from({ length: KEEP_OLDEST }, (_, i) => i))
    expect(state.deliveries.at(-1)!.seq).toBe(999)
    const spilled = state.spilled!
    expect(spilled.reduce((sum, run) => sum + run.count, 0) + state.deliveries.length).toBe(1000)
    // Runs are in queue order and do not overlap.
    for (let i = 1; i < spilled.length; i++) expect(spilled[i]!.first_seq).toBeGreaterThan(spilled[i - 1]!.last_seq)
    expect(hasUndelivered({ ...state, deliveries: [] })).toBe(true)

    const drained = drain(state, batches)
    expect(drained.order).toEqual(Array.from({ length: 1000 }, (_, i) => i))
    expect(drained.state.spilled).toEqual([])
    expect(hasUndelivered(drained.state)).toBe(false)
  })

  it('brings a run back only when no older delivery waits in the document', () => {
    let state = enqueue(createWebhookState(), KEEP_OLDEST + KEEP_NEWEST + SPILL_MIN)
    state = spillDeliveries(state).state
    const [run] = state.spilled!
    expect(run).toMatchObject({ first_seq: KEEP_OLDEST, count: SPILL_MIN })
    expect(findDueRun(state, 'forward')).toBeUndefined()
    for (let i = 0; i < KEEP_OLDEST; i++) state = deliver(state, findHead(state, 'forward')!)
    expect(findDueRun(state, 'forward')).toBe(run)
  })
})
