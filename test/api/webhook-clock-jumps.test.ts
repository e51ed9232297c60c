import { afterEach, describe, expect, it } from 'vitest'
import type { DeliveryReport } from '../../src/webhooks/delivery-report.js'
import { createTestApi, type TestApi } from '../helpers/api.js'
import { findClosedPort, startReceiver, type TestReceiver } from '../helpers/receiver.js'
import { installWallClock, type WallClock } from '../helpers/wall-clock.js'

let api: TestApi | undefined
let receiver: TestReceiver | undefined
let clock: WallClock | undefined
afterEach(async () => {
  clock?.restore()
  await api?.sandbox.close()
  await receiver?.close()
  api = undefined
  receiver = undefined
  clock = undefined
})

const HOUR = 3_600_000
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function waitUntil(done: () => boolean, what: string, timeoutMs = 4000): Promise<void> {
  const started = performance.now()
  while (!done()) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await wait(10)
  }
}

/** Two events of one loan flow, in this order: application.created then collateral confirmed. */
async function makeTwoEvents(target: TestApi): Promise<void> {
  await target.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.1, loan_amount: 1000 })
  await target.post('/api/sandbox/loans/flow', { action: 'confirm_btc', tx_hash: 't', confirmations: 2 })
}

const eventIds = (log: Array<{ event_id: string }>) => log.map((delivery) => delivery.event_id)

describe('webhook retries when the wall clock jumps', () => {
  it('a clock set back an hour does not hold retries, or the events queued behind them, for that hour', async () => {
    receiver = await startReceiver()
    receiver.respond = () => 503
    api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [300, 300, 300, 300, 300] })
    await api.post('/api/sandbox/webhooks', { url: receiver.url })
    await makeTwoEvents(api)
    await receiver.waitFor(1)
    clock = installWallClock()
    clock.jump(-HOUR)
    // The head's retries go on at their 300 ms steps; both events then arrive, in order.
    await receiver.waitFor(3, 4000)
    receiver.respond = () => 200
    await waitUntil(() => new Set(receiver!.received.map((item) => JSON.parse(item.body).id)).size === 2, 'both events')
    const log = (await api.get('/api/sandbox/webhooks')).body.deliveries.reverse()
    const sent = [...new Set(receiver.received.map((item) => JSON.parse(item.body).id as string))]
    expect(sent).toEqual(eventIds(log))
  })

  it('a clock set back an hour does not hold the retries of a receiver that refuses connections, and one back up is tried for real', async () => {
    const port = await findClosedPort()
    const reports: DeliveryReport[] = []
    api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: Array(12).fill(300), onDelivery: (report) => reports.push(report) })
    await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })
    await makeTwoEvents(api)
    await waitUntil(() => reports.length >= 1, 'the first attempt')
    clock = installWallClock()
    clock.jump(-HOUR)
    await waitUntil(() => reports.length >= 3, 'two retries after the clock went back')
    receiver = await startReceiver('/hook', port)
    // The next 300 ms step tries it. Without the fix, the refusal noted before the step stood for
    // every try (~3 s here, until something else connected; an hour by the clock).
    await receiver.waitFor(2, 1500)
    const log = (await api.get('/api/sandbox/webhooks')).body.deliveries.reverse()
    expect(receiver.received.map((item) => JSON.parse(item.body).id)).toEqual(eventIds(log))
  })

  it('a retry that fell due while the machine slept goes out on waking, not a whole step later', async () => {
    receiver = await startReceiver()
    receiver.respond = () => 503
    api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [600_000] })
    await api.post('/api/sandbox/webhooks', { url: receiver.url })
    await makeTwoEvents(api)
    await receiver.waitFor(1)
    // The refused attempt is written before the sleep: a jump while its answer was still on the
    // way (a busy machine) set its retry a step after the wake-up, and the test failed.
    await api.sandbox.deliveriesIdle()
    receiver.respond = () => 200
    // Asleep for an hour: the wall clock moves on, timers do not.
    clock = installWallClock()
    clock.jump(HOUR)
    await receiver.waitFor(3, 4000)
    // The receiver has the last request; the log has its answer once the worker wrote it.
    await api.sandbox.deliveriesIdle()
    const log = (await api.get('/api/sandbox/webhooks')).body.deliveries.reverse()
    expect(log.map((delivery: { status: string }) => delivery.status)).toEqual(['delivered', 'delivered'])
  })
})
