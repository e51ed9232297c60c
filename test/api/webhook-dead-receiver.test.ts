import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { OPEN_SESSION_ID } from '../../src/server/auth.js'
import { deleteSessionData } from '../../src/server/delete-session.js'
import type { DeliveryReport } from '../../src/webhooks/delivery-report.js'
import { SHARED_REFUSAL_MS } from '../../src/webhooks/recent-refusals.js'
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

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface DeliveryView {
  id: string
  event_id: string
  status: string
  attempts: number
  next_attempt_at: string | null
  last_status_code: number | null
  last_error: string | null
  updated_at: string
}

/** The delivery log (oldest first) once `done` holds for it. */
async function waitForLog(target: TestApi, done: (log: DeliveryView[]) => boolean, timeoutMs = 3000): Promise<DeliveryView[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const log = ((await target.get('/api/sandbox/webhooks')).body.deliveries as DeliveryView[]).reverse()
    if (done(log)) return log
    if (Date.now() > deadline) throw new Error(`delivery log never got there: ${JSON.stringify(log)}`)
    await wait(10)
  }
}

describe('webhook delivery to a receiver that refuses connections', () => {
  it('retries on the schedule, logs and reports every attempt, and delivers in order once the receiver listens', async () => {
    const port = await findClosedPort()
    const reports: DeliveryReport[] = []
    api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [30, 30, 150, 150, 150], onDelivery: (report) => reports.push(report) })
    await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })
    const started = await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.1, loan_amount: 1000 })
    await api.post('/api/sandbox/loans/flow', { action: 'confirm_btc', tx_hash: 't', confirmations: 2 })

    const [first, second] = await waitForLog(api, (log) => log[0]!.attempts >= 3)
    expect(first).toMatchObject({ status: 'retrying', last_status_code: null })
    // Retries within SHARED_REFUSAL_MS of a refusal take it over instead of connecting again.
    expect(first!.last_error).toMatch(/^ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:\d+( \(this URL refused a connection \d+ ms before; not tried again\))?$/)
    expect(Date.parse(first!.next_attempt_at!)).toBeGreaterThan(Date.parse(first!.updated_at))
    // Later events wait behind the first.
    expect(second).toMatchObject({ status: 'pending', attempts: 0 })

    receiver = await startReceiver('/hook', port)
    const received = await receiver.waitFor(2)
    expect(received.map((item) => item.headers['x-service-webhook-id'])).toEqual([first!.event_id, second!.event_id])
    await api.sandbox.deliveriesIdle()
    const [delivered, next] = await waitForLog(api, (log) => log.every((delivery) => delivery.status === 'delivered'))
    expect(delivered).toMatchObject({ id: first!.id, status: 'delivered', last_status_code: 200, last_error: null, next_attempt_at: null })
    expect(next).toMatchObject({ status: 'delivered', attempts: 1 })

    // One report per attempt, numbered in order, as `serve` prints them.
    const ofFirst = reports.filter((report) => report.delivery_id === first!.id)
    expect(ofFirst.map((report) => report.attempt)).toEqual(Array.from({ length: delivered!.attempts }, (_, i) => i + 1))
    expect(ofFirst.map((report) => report.status)).toEqual([...Array(delivered!.attempts - 1).fill('retrying'), 'delivered'])
    expect(ofFirst.slice(0, -1).every((report) => report.error?.startsWith('ECONNREFUSED') && report.status_code === null)).toBe(true)
    // Each names the request that queued its event, the retries a parked head made included.
    expect(new Set(ofFirst.map((report) => report.request_id))).toEqual(new Set([started.body.request_id]))
  })

  it('takes a refusal of a moment ago as the first attempt of the keys that queue after it, and tries for real once it is older', async () => {
    const port = await findClosedPort()
    const reports: DeliveryReport[] = []
    const forward = `http://127.0.0.1:${port}/forward`
    api = await createTestApi({ webhookForwardTo: forward, webhookRetrySchedule: [60_000], onDelivery: (report) => reports.push(report) })
    const target = api
    const start = (key: string) => target.call('POST', '/api/sandbox/loans/flow', { key, body: { action: 'start_collateral_transfer', collateral_btc: 0.1, loan_amount: 1000 } })
    const keys = [newKey(), newKey(), newKey()]
    await start(keys[0]!)
    await api.sandbox.deliveriesIdle()
    await start(keys[1]!)
    await start(keys[2]!)

    const refused = /^ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:\d+$/
    const shared = /^ECONNREFUSED: connect ECONNREFUSED 127\.0\.0\.1:\d+ \(this URL refused a connection \d+ ms before; not tried again\)$/
    expect(reports.map((report) => [report.status, report.attempt, report.url])).toEqual(Array(3).fill(['retrying', 1, forward]))
    expect(reports[0]!.error).toMatch(refused)
    expect(reports.slice(1).every((report) => shared.test(report.error ?? ''))).toBe(true)
    for (const key of keys.slice(1)) {
      const [head] = ((await api.get('/api/sandbox/webhooks', key)).body.deliveries as DeliveryView[]).reverse()
      expect(head).toMatchObject({ status: 'retrying', attempts: 1, last_status_code: null })
      expect(head!.last_error).toMatch(shared)
    }

    // A receiver started since is not kept waiting by an old refusal.
    receiver = await startReceiver('/forward', port)
    await wait(SHARED_REFUSAL_MS + 20)
    await start(newKey())
    const [received] = await receiver.waitFor(1)
    // The receiver has the delivery before the server has recorded and reported its answer.
    await api.sandbox.deliveriesIdle()
    expect(reports.at(-1)).toMatchObject({ event_id: received!.headers['x-service-webhook-id'], status: 'delivered', attempt: 1, status_code: 200, error: null })
    expect(receiver.received).toHaveLength(1)
  })

  it('writes the last failure to storage at once', async () => {
    const port = await findClosedPort()
    api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [20, 20] })
    await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })
    await api.post('/api/sandbox/webhooks/test')
    const [failed] = await waitForLog(api, (log) => log[0]!.status === 'failed')
    expect(failed).toMatchObject({ attempts: 3, next_attempt_at: null, last_status_code: null })
    await api.sandbox.deliveriesIdle()
    const [docKey] = await api.sandbox.storage.getKeys('session')
    const stored = await api.sandbox.storage.getItem<{ webhook: { deliveries: DeliveryView[] } }>(docKey!)
    expect(stored!.webhook.deliveries[0]).toMatchObject({ id: failed!.id, status: 'failed', attempts: 3, last_error: failed!.last_error })
  })

  it('keeps counting the attempts the log showed when the retry endpoint puts the delivery back', async () => {
    const port = await findClosedPort()
    api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [20, 20, 60_000, 60_000] })
    await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })
    await api.post('/api/sandbox/webhooks/test')
    // The two refused retries after the first attempt are held in memory by the parked head.
    const [waiting] = await waitForLog(api, (log) => log[0]!.attempts === 3)
    expect(waiting).toMatchObject({ status: 'retrying', attempts: 3 })
    const retried = await api.post('/api/sandbox/webhooks/retry', { delivery_id: waiting!.id })
    expect(retried.body.deliveries[0]).toMatchObject({ id: waiting!.id, status: 'pending', attempts: 3 })
    // Refused again on a fresh schedule: two short waits, then the long one (without the restart,
    // the fourth attempt would already wait the schedule's last 60 s).
    const [again] = await waitForLog(api, (log) => log[0]!.attempts === 6)
    expect(again).toMatchObject({ status: 'retrying', attempts: 6 })
    expect(Date.parse(again!.next_attempt_at!) - Date.parse(again!.updated_at)).toBeGreaterThanOrEqual(59_000)
  })

  it('keeps every attempt the log showed across a graceful restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-dead-'))
    try {
      const port = await findClosedPort()
      // The first retry comes after the first attempt has been written (within a second).
      const options = { storage: 'fs' as const, dataDir, allowLocalWebhooks: true, webhookRetrySchedule: [1_300, 20, 60_000] }
      const first = await createTestApi(options)
      api = first
      await first.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })
      await first.post('/api/sandbox/webhooks/test')
      const [shown] = await waitForLog(first, (log) => log[0]!.attempts === 3)
      expect(shown).toMatchObject({ status: 'retrying' })
      await first.sandbox.close()
      api = await createTestApi(options)
      expect((await api.get('/api/sandbox/webhooks', first.key)).body.deliveries).toEqual([shown])
    } finally {
      await api?.sandbox.close()
      api = undefined
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  it('does not bring back a session deleted while its failed retries were held in memory', async () => {
    const port = await findClosedPort()
    api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [20, 20, 60_000] })
    await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })
    await api.post('/api/sandbox/webhooks/test')
    await waitForLog(api, (log) => log[0]!.attempts === 3)
    await api.sandbox.deliveriesIdle()
    // What `sandbox keys reset` does to the storage of a running server.
    await deleteSessionData(api.sandbox.storage, api.key, OPEN_SESSION_ID)
    await api.sandbox.flush()
    expect(await api.sandbox.storage.getKeys('session')).toEqual([])
  })
})
