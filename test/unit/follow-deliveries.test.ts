import { describe, expect, it } from 'vitest'
import type { SandboxClient } from '../../src/client/sandbox-client.js'
import { followDeliveries, takeChangedDeliveries } from '../../src/webhook-tools/follow-deliveries.js'
import type { DeliveryEntry } from '../../src/webhook-tools/wait-for-deliveries.js'

const entry = (id: string, status: DeliveryEntry['status'], attempts: number, updated = '2026-11-26T00:00:00.000Z'): DeliveryEntry => ({
  id, event_id: `evt_${id}`, event_type: 'sandbox.loan.issued', target: 'forward', url: 'http://127.0.0.1:1/h', status, attempts,
  next_attempt_at: null, last_status_code: null, last_error: null, created_at: '2026-11-26T00:00:00.000Z', updated_at: updated, request_id: 'req_1',
})

describe('takeChangedDeliveries', () => {
  it('reports the whole log first, oldest first, then only what is new or has a new attempt or state', () => {
    const seen = new Map<string, string>()
    // The API lists the newest first.
    expect(takeChangedDeliveries(seen, [entry('b', 'pending', 0), entry('a', 'delivered', 1)]).map((d) => d.id)).toEqual(['a', 'b'])
    expect(takeChangedDeliveries(seen, [entry('b', 'pending', 0), entry('a', 'delivered', 1)])).toEqual([])
    const next = takeChangedDeliveries(seen, [entry('c', 'pending', 0), entry('b', 'retrying', 1), entry('a', 'delivered', 1)])
    expect(next.map((d) => `${d.id} ${d.status}`)).toEqual(['b retrying', 'c pending'])
    // A retry that failed again: same state, one more attempt.
    expect(takeChangedDeliveries(seen, [entry('c', 'pending', 0), entry('b', 'retrying', 2), entry('a', 'delivered', 1)]).map((d) => `${d.id} ${d.attempts}`)).toEqual(['b 2'])
    // The retry endpoint puts a failed one back: its state changes even at the same count.
    takeChangedDeliveries(seen, [entry('d', 'failed', 3)])
    expect(takeChangedDeliveries(seen, [entry('d', 'pending', 3, '2026-11-26T00:01:00.000Z')]).map((d) => d.status)).toEqual(['pending'])
  })

  it('remembers only the deliveries of the last read, however many have gone by', () => {
    const seen = new Map<string, string>()
    // A busy key's log over a long follow: 50 newest at a time, 10 new ones per read.
    for (let read = 0; read < 1_000; read++) {
      const log = Array.from({ length: 50 }, (_, i) => entry(`d${read * 10 + 49 - i}`, 'delivered', 1))
      expect(takeChangedDeliveries(seen, log)).toHaveLength(read === 0 ? 50 : 10)
    }
    expect(seen.size).toBe(50)
  })

})

describe('followDeliveries', () => {
  it('reports a log already read as its first read, and reads again only an interval later', async () => {
    let reads = 0
    const client = { getWebhook: async () => { reads++; return { deliveries: [] } } } as unknown as SandboxClient
    const stop = new AbortController()
    const changes: string[] = []
    const following = followDeliveries(client, { intervalMs: 60_000, signal: stop.signal, first: [entry('b', 'pending', 0), entry('a', 'delivered', 1)], onChange: (delivery) => changes.push(delivery.id) })
    await new Promise((resolve) => setImmediate(resolve))
    expect(changes).toEqual(['a', 'b'])
    stop.abort()
    await following
    // The caller's read stood for the first one; the next was an interval away when it stopped.
    expect(reads).toBe(0)
  })

  it('goes on after a failed read when onReadError says so (serve restarted), tells onRead once a read succeeds, and rejects when not', async () => {
    const failure = new Error('server gone')
    let reads = 0
    const client = { getWebhook: async () => { if (reads++ === 0) throw failure; return { deliveries: [entry('a', 'pending', 0)] } } } as unknown as SandboxClient
    const stop = new AbortController()
    const events: string[] = []
    await followDeliveries(client, {
      intervalMs: 1,
      signal: stop.signal,
      onChange: (delivery) => events.push(`change ${delivery.id}`),
      onRead: () => { events.push('read'); stop.abort() },
      onReadError: (error) => { events.push(`error ${(error as Error).message}`); return true },
    })
    expect(events).toEqual(['error server gone', 'change a', 'read'])
    const failing = { getWebhook: async () => { throw failure } } as unknown as SandboxClient
    const signal = new AbortController().signal
    await expect(followDeliveries(failing, { intervalMs: 1, signal, onChange: () => {}, onReadError: () => false })).rejects.toBe(failure)
    await expect(followDeliveries(failing, { intervalMs: 1, signal, onChange: () => {} })).rejects.toBe(failure)
  })
})
