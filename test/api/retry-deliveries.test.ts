import { afterEach, describe, expect, it } from 'vitest'
import { SandboxApiError } from '../../src/client/api-error.js'
import { retryDeliveries } from '../../src/webhook-tools/retry-deliveries.js'
import { createTestApi, listenTestApi } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'
import { startReverseProxy } from '../helpers/reverse-proxy.js'

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

/**
 * A key whose endpoint (a receiver answering 503) got `events` test events, on `schedule`; its
 * log, oldest first, once the receiver has refused `attempts` POSTs and nothing is in flight.
 */
async function setupRefusing(events: number, schedule: number[], attempts: number) {
  const receiver: TestReceiver = await startReceiver()
  stops.push(() => receiver.close())
  receiver.respond = () => 503
  const api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: schedule })
  stops.push(() => api.sandbox.close())
  const listener = await listenTestApi(api.sandbox)
  stops.push(() => listener.close())
  await api.post('/api/sandbox/webhooks', { url: receiver.url })
  for (let sent = 0; sent < events; sent++) await api.post('/api/sandbox/webhooks/test')
  await receiver.waitFor(attempts)
  await api.sandbox.deliveriesIdle()
  const log = (await api.get('/api/sandbox/webhooks')).body.deliveries as Array<{ id: string; status: string }>
  return { receiver, api, options: { baseUrl: listener.url, apiKey: api.key }, log: log.reverse() }
}

/** Two test events whose every attempt was refused (schedule 50 ms): both `failed`. */
async function setupFailed() {
  const { log, ...rest } = await setupRefusing(2, [50], 4)
  expect(log.map((delivery) => delivery.status)).toEqual(['failed', 'failed'])
  return { ...rest, ids: log.map((delivery) => delivery.id) }
}

describe('retryDeliveries', () => {
  it('puts every failed delivery back and, with waitMs, reports them delivered once the receiver answers', async () => {
    const { receiver, options, ids } = await setupFailed()
    receiver.respond = () => 200
    const report = await retryDeliveries({ ...options, waitMs: 5000 })
    expect(report.retried).toEqual(ids)
    expect(report.deliveries.map((delivery) => [delivery.id, delivery.status, delivery.attempts])).toEqual(ids.map((id) => [id, 'delivered', 3]))
    expect(report.problem).toBeNull()
    expect(receiver.received).toHaveLength(6)
    // Nothing failed is left: an empty retry, and nothing to wait for.
    expect(await retryDeliveries({ ...options, waitMs: 5000 })).toEqual({ retried: [], deliveries: [], waited_ms: null, problem: null, still_retrying: [] })
  })

  it('retries only the ids given, and says which one is still failing after the wait', async () => {
    const { receiver, options, ids } = await setupFailed()
    const report = await retryDeliveries({ ...options, deliveryIds: [ids[1]!], waitMs: 5000 })
    expect(report.retried).toEqual([ids[1]])
    expect(report.deliveries).toMatchObject([{ id: ids[1], status: 'failed', attempts: 4, last_status_code: 503 }])
    expect(report.problem).toMatch(/^1 of 1 not delivered after [\d.]+ s: the first, whd_\w+ \(sandbox\.webhook\.test to \w+ http:\/\/127\.0\.0\.1:\d+\/\w*\), is failed \(last answer: 503\); once the receiver answers 2xx, sandbox webhook retry whd_\w+ sends it again$/)
    expect(receiver.received).toHaveLength(6)
  })

  it('with waitMs, gives up a read of the log still unanswered when the wait is over (a slow server), with the last one read', async () => {
    const { options, ids } = await setupFailed()
    // In front of the server, a proxy that never answers a read of the log: the POST goes through.
    const proxy = await startReverseProxy(options.baseUrl, { handler: (request, _response, forward) => (request.method === 'GET' ? undefined : forward()) })
    stops.push(() => proxy.close())
    const retried = retryDeliveries({ ...options, baseUrl: proxy.url, waitMs: 300 })
    // Unbounded, the read would wait out the client's 30 s timeout three times.
    const report = await Promise.race([retried, new Promise((resolve) => setTimeout(() => resolve('still waiting after 10 s'), 10_000))])
    expect(report).toMatchObject({ retried: ids, deliveries: ids.map((id) => ({ id, status: 'pending' })), problem: expect.stringMatching(/^2 of 2 not delivered after 0\.\d s: the first, whd_\w+ \(sandbox\.webhook\.test to /) })
    expect(proxy.requests.filter((request) => request.method === 'GET').length).toBeGreaterThan(0)
  })

  it('an unknown id is the server\'s 404 and nothing is retried', async () => {
    const { receiver, api, options, ids } = await setupFailed()
    const error = await retryDeliveries({ ...options, deliveryIds: [ids[0]!, 'whd_unknown'] }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SandboxApiError)
    expect(error).toMatchObject({ status: 404, errorCode: 'WEBHOOK_DELIVERY_NOT_FOUND' })
    // Every send the server would have made is over: a delivery put back would show here.
    await api.sandbox.deliveriesIdle()
    expect(receiver.received).toHaveLength(4)
  })

  it('with waitMs, says which retried deliveries are older than the 50 the log shows, instead of passing without seeing them', async () => {
    const { receiver, api, options, ids } = await setupFailed()
    receiver.respond = () => 200
    // 50 newer deliveries push both failed ones out of the log's view; the server still holds them.
    for (let index = 0; index < 50; index++) await api.post('/api/sandbox/webhooks/test')
    await receiver.waitFor(54)
    await api.sandbox.deliveriesIdle()
    const report = await retryDeliveries({ ...options, waitMs: 5000 })
    expect(report.retried).toEqual(expect.arrayContaining(ids))
    expect(report.deliveries).toEqual([])
    expect(report.problem).toBe(`2 of 2 retried are older than the 50 newest deliveries the log shows, so their outcome cannot be seen: ${report.retried.join(', ')}`)
  })

  it('without ids, names the deliveries still retrying on their schedule, which only their ids send now', async () => {
    // The first attempt refused, the next one 60 s away: still retrying.
    const { receiver, options, log: [retrying] } = await setupRefusing(1, [60_000], 1)
    expect(retrying!.status).toBe('retrying')
    expect(await retryDeliveries(options)).toMatchObject({ retried: [], still_retrying: [retrying!.id] })
    receiver.respond = () => 200
    const named = await retryDeliveries({ ...options, deliveryIds: [retrying!.id], waitMs: 5000 })
    expect(named).toMatchObject({ retried: [retrying!.id], deliveries: [{ id: retrying!.id, status: 'delivered' }], problem: null, still_retrying: [] })
  })

  it('names every delivery still retrying, oldest first, and none when ids are given', async () => {
    const receiver: TestReceiver = await startReceiver()
    stops.push(() => receiver.close())
    receiver.respond = () => 503
    // The endpoint and the forward URL: one event, two deliveries, each retrying in its own queue.
    const api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [60_000], webhookForwardTo: receiver.url })
    stops.push(() => api.sandbox.close())
    const listener = await listenTestApi(api.sandbox)
    stops.push(() => listener.close())
    await api.post('/api/sandbox/webhooks', { url: receiver.url })
    await api.post('/api/sandbox/partner', { name: 'Acme' })
    await receiver.waitFor(2)
    await api.sandbox.deliveriesIdle()
    const log = ((await api.get('/api/sandbox/webhooks')).body.deliveries as Array<{ id: string; status: string }>).reverse()
    expect(log.map((delivery) => delivery.status)).toEqual(['retrying', 'retrying'])
    const options = { baseUrl: listener.url, apiKey: api.key }
    expect((await retryDeliveries(options)).still_retrying).toEqual(log.map((delivery) => delivery.id))
    expect(await retryDeliveries({ ...options, deliveryIds: [log[0]!.id] })).toMatchObject({ retried: [log[0]!.id], still_retrying: [] })
  })
})
