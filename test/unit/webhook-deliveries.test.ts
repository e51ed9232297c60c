import { describe, expect, it } from 'vitest'
import type { SandboxEvent } from '../../src/domain/types.js'
import { createWebhookState, enqueueEvents, FINISHED_KEPT, recordAttempt, requeueDeliveries, type TargetInfo } from '../../src/webhooks/deliveries.js'
import { DEFAULT_RETRY_SCHEDULE_MS, parseRetrySchedule } from '../../src/webhooks/retry-schedule.js'
import { needsDispatch } from '../../src/webhooks/waiting-deliveries.js'
import { showDelivery, viewDeliveries } from '../../src/webhooks/delivery-views.js'
import type { WebhookState } from '../../src/webhooks/types.js'

const NOW = '2026-11-22T10:00:00.000Z'
const FORWARD: TargetInfo = { target: 'forward', url: 'http://127.0.0.1:3000/hook', secret: 'whsec_x' }
let nextId = 0
const newId = (prefix: string) => `${prefix}_${++nextId}`

function event(type: SandboxEvent['type'] = 'sandbox.loan.issued'): SandboxEvent {
  return { id: newId('evt'), type, created_at: NOW, api_version: '0.3.0', data: { object: {} } } as unknown as SandboxEvent
}

function enqueue(state: WebhookState, count = 1): WebhookState {
  return enqueueEvents(state, Array.from({ length: count }, () => event()), [FORWARD], NOW, newId)
}

describe('needsDispatch: whether a commit has to wake the delivery worker', () => {
  it('wakes for the first delivery of a target, not for ones queued behind a waiting delivery', () => {
    const empty = createWebhookState()
    const first = enqueue(empty)
    expect(needsDispatch(empty, first)).toBe(true)
    expect(needsDispatch(first, enqueue(first, 2))).toBe(false)
  })

  it('wakes again once the waiting ones are delivered or changed', () => {
    const first = enqueue(createWebhookState())
    const delivered = recordAttempt(first, first.deliveries[0]!.id, { statusCode: 200, error: null, durationMs: 1 }, [10], Date.parse(NOW))
    expect(needsDispatch(delivered, enqueue(delivered))).toBe(true)
    const retrying = recordAttempt(first, first.deliveries[0]!.id, { statusCode: 500, error: null, durationMs: 1 }, [10], Date.parse(NOW))
    // The retrying head changed: the worker's timer was set for the old state.
    expect(needsDispatch(first, retrying)).toBe(true)
  })

  it('does not wake when nothing waits or nothing changed', () => {
    const first = enqueue(createWebhookState())
    expect(needsDispatch(first, first)).toBe(false)
    const delivered = recordAttempt(first, first.deliveries[0]!.id, { statusCode: 204, error: null, durationMs: 1 }, [10], Date.parse(NOW))
    expect(needsDispatch(first, delivered)).toBe(false)
  })

  it('wakes when the endpoint changes (enabled again, new URL)', () => {
    const first = enqueue(createWebhookState())
    const endpoint = { id: 'we_1', url: 'https://partner.example/hook', enabled: true, events: [], secret: 's', createdAt: NOW, updatedAt: NOW }
    expect(needsDispatch(first, { ...first, endpoint })).toBe(true)
  })
})

describe('the delivery log keeps the newest finished deliveries', () => {
  it('keeps the newest 200 delivered and the newest 200 failed, and every waiting one', () => {
    let state = enqueue(createWebhookState(), 700)
    const ids = state.deliveries.map((delivery) => delivery.id)
    const at = Date.parse(NOW)
    // No retries in this schedule: a failed attempt is final.
    for (const id of ids.slice(0, 250)) state = recordAttempt(state, id, { statusCode: 500, error: null, durationMs: 1 }, [], at)
    for (const id of ids.slice(250, 500)) state = recordAttempt(state, id, { statusCode: 200, error: null, durationMs: 1 }, [], at)
    expect(FINISHED_KEPT).toBe(200)
    const kept = state.deliveries.map((delivery) => delivery.id)
    expect(kept).toEqual([...ids.slice(50, 250), ...ids.slice(300, 500), ...ids.slice(500)])
    expect(state.deliveries.filter((delivery) => delivery.status === 'failed')).toHaveLength(200)
  })

  it('drops only the oldest when the 201st is delivered or fails', () => {
    let state = enqueue(createWebhookState(), 402)
    const ids = state.deliveries.map((delivery) => delivery.id)
    const at = Date.parse(NOW)
    for (const id of ids.slice(0, 201)) state = recordAttempt(state, id, { statusCode: 200, error: null, durationMs: 1 }, [], at)
    for (const id of ids.slice(201)) state = recordAttempt(state, id, { statusCode: 500, error: null, durationMs: 1 }, [], at)
    expect(state.deliveries.map((delivery) => delivery.id)).toEqual([...ids.slice(1, 201), ...ids.slice(202)])
  })
})

describe('the retry endpoint\'s requeue', () => {
  it('keeps counting attempts while the schedule starts again', () => {
    const schedule = [1_000, 2_000]
    let state = enqueue(createWebhookState())
    const id = state.deliveries[0]!.id
    const fail = (at: number) => { state = recordAttempt(state, id, { statusCode: 500, error: null, durationMs: 1 }, schedule, at) }
    const at = Date.parse(NOW)
    for (let i = 0; i < 3; i++) fail(at)
    expect(state.deliveries[0]).toMatchObject({ status: 'failed', attempts: 3 })

    state = requeueDeliveries(state, [id], NOW)
    expect(showDelivery(state.deliveries[0]!)).toMatchObject({ status: 'pending', attempts: 3 })
    expect(showDelivery(state.deliveries[0]!)).not.toHaveProperty('schedule_base')
    fail(at)
    expect(state.deliveries[0]).toMatchObject({ status: 'retrying', attempts: 4, next_attempt_at: new Date(at + 1_000).toISOString() })
    fail(at)
    expect(state.deliveries[0]).toMatchObject({ status: 'retrying', attempts: 5, next_attempt_at: new Date(at + 2_000).toISOString() })
    fail(at)
    expect(state.deliveries[0]).toMatchObject({ status: 'failed', attempts: 6, next_attempt_at: null })
  })
})

describe('the retry schedule', () => {
  it('retries after 5 s, 30 s, 2 min and 10 min by default, then fails (decisions.md: 5 attempts)', () => {
    let state = enqueue(createWebhookState())
    const id = state.deliveries[0]!.id
    const at = Date.parse(NOW)
    const waits: Array<number | null> = []
    for (let i = 0; i < 5; i++) {
      state = recordAttempt(state, id, { statusCode: 503, error: null, durationMs: 1 }, DEFAULT_RETRY_SCHEDULE_MS, at)
      const next = state.deliveries[0]!.next_attempt_at
      waits.push(next === null ? null : Date.parse(next) - at)
    }
    expect(waits).toEqual([5_000, 30_000, 120_000, 600_000, null])
    expect(state.deliveries[0]).toMatchObject({ status: 'failed', attempts: 5, last_error: 'receiver answered 503' })
  })

  it('parses --webhook-retry-schedule as the other duration flags do: 1 to 20 delays of at most a day, nothing else', () => {
    expect(parseRetrySchedule('500ms, 5s,2m ,1h')).toEqual([500, 5_000, 120_000, 3_600_000])
    // --wait and --timeout take 1.5s and 1d; the schedule refused them before.
    expect(parseRetrySchedule('1.5s,0.5m,1d,2H')).toEqual([1_500, 30_000, 86_400_000, 7_200_000])
    expect(parseRetrySchedule(Array(20).fill('1s').join(','))).toHaveLength(20)
    expect(parseRetrySchedule('24h,1440m')).toEqual([86_400_000, 86_400_000])
    expect(() => parseRetrySchedule('5s,25h')).toThrow('invalid retry schedule "5s,25h": each delay at most 24h')
    expect(() => parseRetrySchedule('5s,1w')).toThrow('each delay at most 24h')
    for (const bad of ['', 'x5s', '5s,', '5', '1.5', '-5s', '.5s', '1e3ms', '5 s s', Array(21).fill('1s').join(',')]) {
      expect(() => parseRetrySchedule(bad), bad).toThrow(/invalid retry schedule/)
    }
  })
})

describe('an attempt', () => {
  it('delivers on a 2xx answer only: a redirect (not followed) or any other status retries', () => {
    const at = Date.parse(NOW)
    const statusAfter = (statusCode: number) => {
      const state = enqueue(createWebhookState())
      return recordAttempt(state, state.deliveries[0]!.id, { statusCode, error: null, durationMs: 1 }, [1_000], at).deliveries[0]!.status
    }
    expect([200, 204, 299].map(statusAfter)).toEqual(['delivered', 'delivered', 'delivered'])
    expect([199, 300, 302, 400, 500].map(statusAfter)).toEqual(['retrying', 'retrying', 'retrying', 'retrying', 'retrying'])
  })

  it('records the URL the attempt went to when it differs from the queued one', () => {
    const state = enqueue(createWebhookState())
    const next = recordAttempt(state, state.deliveries[0]!.id, { statusCode: 200, error: null, durationMs: 1, url: 'http://127.0.0.1:4000/new' }, [], Date.parse(NOW))
    expect(showDelivery(next.deliveries[0]!).url).toBe('http://127.0.0.1:4000/new')
  })
})

describe('the delivery log as the API shows it', () => {
  it('is the most recent 50, newest first', () => {
    const state = enqueue(createWebhookState(), 60)
    const ids = state.deliveries.map((delivery) => delivery.id)
    expect(viewDeliveries(state).map((delivery) => delivery.id)).toEqual(ids.slice(10).reverse())
  })

  it('gives a delivery queued behind an earlier one put back by the retry endpoint that one\'s next attempt, not its own time gone by', () => {
    const schedule = [1_000]
    const at = Date.parse(NOW)
    let state = enqueue(createWebhookState(), 3)
    const [first, second, third] = state.deliveries.map((delivery) => delivery.id)
    const fail = (id: string, when: number) => { state = recordAttempt(state, id, { statusCode: 500, error: null, durationMs: 1 }, schedule, when) }
    fail(first!, at)
    fail(first!, at + 1_000)
    fail(second!, at + 1_000)
    expect(state.deliveries.map((delivery) => delivery.status)).toEqual(['failed', 'retrying', 'pending'])
    // Put back ahead of the second, whose retry was due at +2 s: that time goes by while it waits.
    state = requeueDeliveries(state, [first!], new Date(at + 1_500).toISOString())
    fail(first!, at + 1_500)
    const shown = Object.fromEntries(viewDeliveries(state).map((delivery) => [delivery.id, [delivery.status, delivery.next_attempt_at]]))
    const firstNext = new Date(at + 2_500).toISOString()
    expect(shown).toEqual({ [first!]: ['retrying', firstNext], [second!]: ['retrying', firstNext], [third!]: ['pending', firstNext] })
  })
})
