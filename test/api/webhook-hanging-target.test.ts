import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, issueLoan, LOAN, type TestApi } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'
import { startSilentServer, type SilentServer } from '../helpers/silent-server.js'

let api: TestApi | undefined
let receiver: TestReceiver | undefined
let silent: SilentServer | undefined
afterEach(async () => {
  // The hanging receiver first: its connection closed, the attempt still out ends at once and the
  // sandbox's close does not wait out the 10 s timeout.
  await silent?.close()
  await api?.sandbox.close()
  await receiver?.close()
  api = receiver = silent = undefined
})

const ISSUE_EVENTS = ['sandbox.loan_application.updated', 'sandbox.loan_application.updated', 'sandbox.loan_application.updated', 'sandbox.loan.issued']

interface LoggedDelivery {
  target: string
  status: string
  event_type: string
  attempts: number
  last_status_code: number | null
}

/**
 * The key's delivery log once `receiver`'s target has `count` events delivered (every event of the
 * loan by default), or as it is when the sandbox gave up on the request the silent receiver holds
 * (its 10 s delivery timeout closes the connection), whichever is first.
 */
async function readLogOnceDelivered(api: TestApi, receiver: TestReceiver, silent: SilentServer, target: string, count = ISSUE_EVENTS.length): Promise<LoggedDelivery[]> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const log = (await api.get('/api/sandbox/webhooks')).body.deliveries as LoggedDelivery[]
    const delivered = log.filter((delivery) => delivery.target === target && delivery.status === 'delivered')
    if (delivered.length >= count && receiver.received.length >= count) return log
    if (silent.dropped() > 0 || Date.now() > deadline) return log
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('a key with an endpoint and --webhook-forward-to, one of the two receivers hanging', () => {
  it('delivers every event to the forward receiver while the endpoint\'s receiver still holds its first request', async () => {
    silent = await startSilentServer()
    receiver = await startReceiver('/forward')
    // The default 10 s delivery timeout: the endpoint's attempt is held that long.
    api = await createTestApi({ allowLocalWebhooks: true, webhookForwardTo: receiver.url })
    expect((await api.post('/api/sandbox/webhooks', { url: `${silent.url}/hang` })).status).toBe(200)
    await issueLoan(api)

    const log = await readLogOnceDelivered(api, receiver, silent, 'forward')
    // The endpoint's first attempt is still out, unanswered, and nothing else was sent to it.
    expect(receiver.received.map((item) => item.headers['x-service-webhook-event'])).toEqual(ISSUE_EVENTS)
    expect(silent.requests()).toBe(1)
    expect(silent.dropped()).toBe(0)
    expect(log.filter((delivery) => delivery.target === 'endpoint').map((delivery) => delivery.status)).toEqual(['pending', 'pending', 'pending', 'pending'])
    const forwarded = log.filter((delivery) => delivery.target === 'forward')
    expect(forwarded.map((delivery) => delivery.event_type)).toEqual([...ISSUE_EVENTS].reverse())
    expect(forwarded.every((delivery) => delivery.status === 'delivered')).toBe(true)
  }, 30_000)

  it('forwards the event of each later request at once, the earlier ones delivered, while the endpoint\'s receiver still holds its first request', async () => {
    silent = await startSilentServer()
    receiver = await startReceiver('/forward')
    api = await createTestApi({ allowLocalWebhooks: true, webhookForwardTo: receiver.url })
    expect((await api.post('/api/sandbox/webhooks', { url: `${silent.url}/hang` })).status).toBe(200)
    const steps = [{ action: 'start_collateral_transfer', ...LOAN }, { action: 'confirm_btc', tx_hash: 'tx-1', confirmations: 6 }, { action: 'run_kyt' }, { action: 'complete_payout' }]
    // Each step once the forward receiver took the one before: its queue is empty when the event comes.
    for (const [i, step] of steps.entries()) {
      expect((await api.post('/api/sandbox/loans/flow', step)).status).toBe(200)
      await readLogOnceDelivered(api, receiver, silent, 'forward', i + 1)
    }
    expect(receiver.received.map((item) => item.headers['x-service-webhook-event'])).toEqual(ISSUE_EVENTS)
    expect(silent.requests()).toBe(1)
    expect(silent.dropped()).toBe(0)
  }, 30_000)

  it('delivers every event to the endpoint while the forward receiver still holds its first request', async () => {
    silent = await startSilentServer()
    receiver = await startReceiver('/endpoint')
    api = await createTestApi({ allowLocalWebhooks: true, webhookForwardTo: `${silent.url}/hang` })
    expect((await api.post('/api/sandbox/webhooks', { url: receiver.url })).status).toBe(200)
    await issueLoan(api)

    const log = await readLogOnceDelivered(api, receiver, silent, 'endpoint')
    expect(receiver.received.map((item) => item.headers['x-service-webhook-event'])).toEqual(ISSUE_EVENTS)
    expect(silent.requests()).toBe(1)
    expect(silent.dropped()).toBe(0)
    expect(log.filter((delivery) => delivery.target === 'forward').map((delivery) => delivery.status)).toEqual(['pending', 'pending', 'pending', 'pending'])
    expect(log.filter((delivery) => delivery.target === 'endpoint').every((delivery) => delivery.status === 'delivered')).toBe(true)
  }, 30_000)

  it('retries the forward receiver on its schedule while the endpoint\'s receiver still holds its first request', async () => {
    silent = await startSilentServer()
    receiver = await startReceiver('/forward')
    // The first forward attempt is refused with a 503: its retry falls due while the endpoint's attempt is out.
    receiver.respond = () => (receiver!.received.length === 1 ? 503 : 200)
    api = await createTestApi({ allowLocalWebhooks: true, webhookForwardTo: receiver.url, webhookRetrySchedule: [200, 200, 200] })
    expect((await api.post('/api/sandbox/webhooks', { url: `${silent.url}/hang` })).status).toBe(200)
    await issueLoan(api)

    const log = await readLogOnceDelivered(api, receiver, silent, 'forward')
    expect(receiver.received.map((item) => item.headers['x-service-webhook-event'])).toEqual([ISSUE_EVENTS[0], ...ISSUE_EVENTS])
    expect(silent.requests()).toBe(1)
    expect(silent.dropped()).toBe(0)
    const forwarded = log.filter((delivery) => delivery.target === 'forward')
    expect(forwarded.map((delivery) => delivery.status)).toEqual(['delivered', 'delivered', 'delivered', 'delivered'])
    expect(forwarded.at(-1)).toMatchObject({ attempts: 2, last_status_code: 200 })
  }, 30_000)
})
