import { describe, expect, it } from 'vitest'
import type { SandboxEvent } from '../../src/domain/types.js'
import { createWebhookState, enqueueEvents, recordAttempt, requeueDeliveries, type TargetInfo } from '../../src/webhooks/deliveries.js'
import { createRecentRefusals, findSharedRefusals, SHARED_REFUSAL_MS, type Refusal } from '../../src/webhooks/recent-refusals.js'
import type { WebhookState } from '../../src/webhooks/types.js'

const NOW = Date.parse('2026-11-22T10:00:00.000Z')
const FORWARD: TargetInfo = { target: 'forward', url: 'http://127.0.0.1:3000/hook', secret: 'whsec_x' }
const ENDPOINT: TargetInfo = { target: 'endpoint', url: 'https://partner.example/hook', secret: 'whsec_y' }
const SCHEDULE = [5_000, 30_000]
const REFUSED = 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:3000'
let nextId = 0
const newId = (prefix: string) => `${prefix}_${++nextId}`

function event(type: SandboxEvent['type'] = 'sandbox.loan.issued'): SandboxEvent {
  return { id: newId('evt'), type, created_at: new Date(NOW).toISOString(), api_version: '0.3.0', data: { object: {} } } as unknown as SandboxEvent
}

function enqueue(state: WebhookState, targets = [FORWARD], type?: SandboxEvent['type']): WebhookState {
  return enqueueEvents(state, [event(type), event(type)], targets, new Date(NOW).toISOString(), newId)
}

/** Refusals of the forward URL only, 40 ms before NOW. */
const forwardRefused = (url: string): Refusal | undefined => (url === FORWARD.url ? { error: REFUSED, at: NOW - 40 } : undefined)

describe('createRecentRefusals', () => {
  it('remembers a failure to connect for SHARED_REFUSAL_MS, and forgets it once a connection is made', () => {
    const recent = createRecentRefusals()
    recent.note(FORWARD.url, { error: REFUSED, refused: true }, NOW)
    expect(recent.find(FORWARD.url, NOW + SHARED_REFUSAL_MS)).toEqual({ error: REFUSED, at: NOW })
    expect(recent.find(ENDPOINT.url, NOW)).toBeUndefined()
    expect(recent.find(FORWARD.url, NOW + SHARED_REFUSAL_MS + 1)).toBeUndefined()
    recent.note(FORWARD.url, { error: REFUSED, refused: true }, NOW)
    // A receiver that answers, even with an error, takes connections.
    recent.note(FORWARD.url, { error: 'receiver answered 500', refused: false }, NOW + 1)
    expect(recent.find(FORWARD.url, NOW + 2)).toBeUndefined()
  })

  it('does not keep the refusals of URLs nobody sends to again: a long run with a new receiver URL each time stays bounded', () => {
    const recent = createRecentRefusals()
    // A long-running serve: every minute a new URL (a `sandbox run` receiver on a fresh port)
    // refuses once and is never asked about again.
    for (let i = 0; i < 10_000; i++) recent.note(`http://127.0.0.1:${20_000 + i}/hook`, { error: REFUSED, refused: true }, NOW + i * 60_000)
    expect(recent.size).toBeLessThanOrEqual(128)
    // The newest refusal still stands.
    expect(recent.find('http://127.0.0.1:29999/hook', NOW + 9_999 * 60_000)).toEqual({ error: REFUSED, at: NOW + 9_999 * 60_000 })
  })

  it('keeps a refusal noted after the asking request started, and still shares it with the next', () => {
    const recent = createRecentRefusals()
    recent.note(FORWARD.url, { error: REFUSED, refused: true }, NOW)
    // A request that took its time a millisecond before the refusal was noted commits after it.
    expect(recent.find(FORWARD.url, NOW - 1)).toEqual({ error: REFUSED, at: NOW })
    expect(recent.find(FORWARD.url, NOW + 10)).toEqual({ error: REFUSED, at: NOW })
  })
})

describe('findSharedRefusals: a recent refusal of the URL stands for a new head\'s first attempt', () => {
  it('names the head the commit queued, with the refusal as its error, and not the deliveries behind it', () => {
    const before = createWebhookState()
    const after = enqueue(before)
    const shared = findSharedRefusals(before, after, forwardRefused, NOW)
    expect(shared).toEqual([{ delivery: after.deliveries[0], error: `${REFUSED} (this URL refused a connection 40 ms before; not tried again)` }])
  })

  it('leaves heads alone whose URL did not refuse, and deliveries queued behind an earlier one', () => {
    const before = createWebhookState()
    const both = enqueue(before, [ENDPOINT, FORWARD])
    expect(findSharedRefusals(before, both, forwardRefused, NOW).map(({ delivery }) => delivery.target)).toEqual(['forward'])
    const queued = enqueue(before)
    const waiting = recordAttempt(queued, queued.deliveries[0]!.id, { statusCode: null, error: REFUSED, durationMs: 1 }, SCHEDULE, NOW)
    expect(findSharedRefusals(waiting, enqueue(waiting), forwardRefused, NOW)).toEqual([])
  })

  it('tries test events and deliveries put back by the retry endpoint for real', () => {
    const before = createWebhookState()
    const test = enqueue(before, [{ ...ENDPOINT, url: FORWARD.url }], 'sandbox.webhook.test')
    expect(findSharedRefusals(before, test, forwardRefused, NOW)).toEqual([])
    const first = enqueue(before)
    let failed = first
    for (let i = 0; i < 3; i++) failed = recordAttempt(failed, first.deliveries[0]!.id, { statusCode: null, error: REFUSED, durationMs: 1 }, SCHEDULE, NOW)
    failed = recordAttempt(failed, first.deliveries[1]!.id, { statusCode: 200, error: null, durationMs: 1 }, SCHEDULE, NOW)
    expect(failed.deliveries[0]!.status).toBe('failed')
    const requeued = requeueDeliveries(failed, [failed.deliveries[0]!.id], new Date(NOW).toISOString())
    expect(findSharedRefusals(failed, requeued, forwardRefused, NOW)).toEqual([])
  })
})
