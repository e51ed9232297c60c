import { afterEach, describe, expect, it, vi } from 'vitest'
import type { SandboxEvent } from '../../src/domain/types.js'
import type { SessionDoc } from '../../src/server/session-doc.js'
import { createWebhookState, enqueueEvents, requeueDeliveries, type TargetInfo } from '../../src/webhooks/deliveries.js'
import type { DeliveryReport } from '../../src/webhooks/delivery-report.js'
import { createDueQueue } from '../../src/webhooks/due-queue.js'
import { applyHeldAttempts, toParkedHead } from '../../src/webhooks/parked-head.js'
import { createParkedHeads } from '../../src/webhooks/parked-heads.js'
import type { WebhookState } from '../../src/webhooks/types.js'

const NOW = Date.parse('2026-11-25T10:00:00.000Z')
const FORWARD: TargetInfo = { target: 'forward', url: 'http://127.0.0.1:3000/hook', secret: 'whsec_x' }
const SCHEDULE = [5_000, 30_000, 120_000]
const REFUSED = 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:3000'
let nextId = 0
const newId = (prefix: string) => `${prefix}_${++nextId}`

function queued(): WebhookState {
  const event = { id: newId('evt'), type: 'sandbox.loan.issued', created_at: new Date(NOW).toISOString(), api_version: '0.3.0', data: { object: {} } } as unknown as SandboxEvent
  return enqueueEvents(createWebhookState(), [event], [FORWARD], new Date(NOW).toISOString(), newId)
}

function parkedHead(state: WebhookState, slot = 'k:s') {
  return toParkedHead(slot, state.deliveries[0]!, FORWARD.url)
}

describe('createDueQueue', () => {
  it('gives back what is due, earliest first, and keeps the rest', () => {
    const queue = createDueQueue<{ next: number; name: string }>()
    for (const [next, name] of [[30, 'c'], [10, 'a'], [50, 'e'], [20, 'b'], [40, 'd']] as const) queue.push({ next, name })
    expect(queue.peekNext()).toBe(10)
    expect(queue.popDue(35).map((item) => item.name)).toEqual(['a', 'b', 'c'])
    expect(queue.size).toBe(2)
    expect(queue.popDue(100, 1).map((item) => item.name)).toEqual(['d'])
    expect(queue.popDue(100).map((item) => item.name)).toEqual(['e'])
    expect(queue.peekNext()).toBeUndefined()
  })
})

describe('applyHeldAttempts', () => {
  it('writes held attempts as the schedule would have recorded them one by one', () => {
    const state = queued()
    const head = { ...parkedHead(state), held: 2, lastError: REFUSED, lastDurationMs: 0.4, lastAt: NOW + 5_000 }
    const [delivery] = applyHeldAttempts(state, [head], SCHEDULE).deliveries
    expect(delivery).toMatchObject({
      status: 'retrying',
      attempts: 2,
      last_status_code: null,
      last_error: REFUSED,
      updated_at: new Date(NOW + 5_000).toISOString(),
      next_attempt_at: new Date(NOW + 5_000 + 30_000).toISOString(),
    })
  })

  it('leaves a delivery changed since it was parked (put back by the retry endpoint) as it is', () => {
    const state = queued()
    const head = { ...parkedHead(state), held: 1, lastError: REFUSED, lastAt: NOW + 1 }
    const requeued = requeueDeliveries(state, [head.id], new Date(NOW + 2).toISOString())
    expect(applyHeldAttempts(requeued, [head], SCHEDULE)).toBe(requeued)
  })
})

describe('createParkedHeads', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  function setup(probeError: string | null) {
    vi.useFakeTimers({ now: NOW })
    const reports: DeliveryReport[] = []
    const woken: string[] = []
    const probe = vi.fn(async (_url: string, _target: string) => ({ error: probeError, durationMs: 0.5 }))
    const parked = createParkedHeads({ retryScheduleMs: SCHEDULE, probe, wake: (slot) => woken.push(slot), onAttempt: (report) => reports.push(report), logError: (error) => { throw error } })
    return { parked, reports, woken, probe }
  }

  it('counts a refused retry for every due head with one probe of their URL, and reports each', async () => {
    const { parked, reports, woken, probe } = setup(REFUSED)
    const a = queued()
    const b = queued()
    parked.park([{ ...parkedHead(a, 'k1:s'), next: NOW + 5_000 }, { ...parkedHead(b, 'k2:s'), next: NOW + 5_010 }])
    await vi.advanceTimersByTimeAsync(5_100)
    expect(probe).toHaveBeenCalledTimes(1)
    expect(woken).toEqual([])
    expect(reports.map((report) => [report.delivery_id, report.attempt, report.status, report.error])).toEqual([
      [a.deliveries[0]!.id, 1, 'retrying', REFUSED],
      [b.deliveries[0]!.id, 1, 'retrying', REFUSED],
    ])
    const shown = parked.overlay('k1:s', a).deliveries[0]!
    expect(shown).toMatchObject({ attempts: 1, status: 'retrying', last_error: REFUSED })
    expect(Date.parse(shown.next_attempt_at!)).toBeGreaterThanOrEqual(NOW + 5_000 + 5_000)
    // Nothing is retried before it is due again.
    await vi.advanceTimersByTimeAsync(4_000)
    expect(probe).toHaveBeenCalledTimes(1)
  })

  it('probes a URL once per target: an endpoint is checked before connecting, a forward URL is not', async () => {
    const { parked, probe } = setup(REFUSED)
    const state = queued()
    parked.park([{ ...parkedHead(state, 'k1:s'), next: NOW + 100 }, { ...parkedHead(state, 'k2:s'), target: 'endpoint', next: NOW + 100 }, { ...parkedHead(queued(), 'k3:s'), next: NOW + 100 }])
    await vi.advanceTimersByTimeAsync(200)
    expect(probe.mock.calls).toEqual([[FORWARD.url, 'forward'], [FORWARD.url, 'endpoint']])
  })

  it('retries a crowd of heads due at once over several turns, every one of them', async () => {
    const { parked, reports, probe } = setup(REFUSED)
    parked.park(Array.from({ length: 1_200 }, (_, i) => ({ ...parkedHead(queued(), `k${i}:s`), next: NOW + 100 })))
    await vi.advanceTimersByTimeAsync(200)
    expect(reports).toHaveLength(1_200)
    // 500 a turn: three turns, one probe each.
    expect(probe).toHaveBeenCalledTimes(3)
  })

  it('wakes the session when the URL takes a connection, and before a last attempt', async () => {
    const up = setup(null)
    up.parked.park([{ ...parkedHead(queued()), next: NOW + 100 }])
    await vi.advanceTimersByTimeAsync(200)
    expect(up.woken).toEqual(['k:s'])
    expect(up.reports).toEqual([])
    vi.useRealTimers()

    const down = setup(REFUSED)
    // Three attempts made: the fourth is the last of a three-delay schedule, so the worker makes it
    // (and writes the failure). After two, the third is only counted.
    // Five attempts, four before the retry endpoint restarted the schedule and one after: the sixth
    // is the second of the fresh schedule, so it is only counted too.
    down.parked.park([
      { ...parkedHead(queued(), 'k3:s'), baseAttempts: 3, next: NOW + 100 },
      { ...parkedHead(queued(), 'k2:s'), baseAttempts: 2, next: NOW + 100 },
      { ...parkedHead(queued(), 'k5:s'), baseAttempts: 5, scheduleBase: 4, next: NOW + 100 },
    ])
    await vi.advanceTimersByTimeAsync(200)
    expect(down.woken).toEqual(['k3:s'])
    expect(down.reports.map((report) => report.attempt).sort((a, b) => a - b)).toEqual([3, 6])
  })

  it('hands held attempts over when released or checkpointed, and no longer retries a released head', async () => {
    const { parked, probe } = setup(REFUSED)
    const state = queued()
    const doc = { webhook: state } as SessionDoc
    parked.park([{ ...parkedHead(state), held: 1, lastError: REFUSED, lastAt: NOW, next: NOW + 5_000 }])
    const checkpoint = parked.checkpoint('k:s')!
    const written = checkpoint(doc)
    expect(written.webhook.deliveries[0]).toMatchObject({ attempts: 1, status: 'retrying' })
    // After a checkpoint the document holds that attempt, and the head holds none more.
    expect(parked.overlay('k:s', written.webhook)).toBe(written.webhook)
    expect(parked.release('k:s')).toBeUndefined()
    expect(parked.isParked('k:s')).toBe(false)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(probe).not.toHaveBeenCalled()
  })
})
