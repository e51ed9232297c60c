import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/create-storage.js'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { createTestApi, issueLoan, newKey, type TestApi } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

let api: TestApi | undefined
let receiver: TestReceiver | undefined
afterEach(async () => {
  await api?.sandbox.close()
  await receiver?.close()
  api = undefined
  receiver = undefined
})

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function setup(options: Parameters<typeof createTestApi>[0] = {}) {
  receiver = await startReceiver()
  api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [30, 30, 30], ...options })
  const created = await api.post('/api/sandbox/webhooks', { url: receiver.url })
  expect(created.status).toBe(200)
  return { api, receiver, secret: created.body.endpoint.signingSecret as string }
}

/** A test event whose every attempt the receiver answered 503: its delivery ends `failed`. */
async function setupFailedTestEvent() {
  const { api, receiver } = await setup()
  receiver.respond = () => 503
  await api.post('/api/sandbox/webhooks/test')
  await receiver.waitFor(4)
  await wait(50)
  await api.sandbox.deliveriesIdle()
  const failed = (await api.get('/api/sandbox/webhooks')).body.deliveries[0]
  return { api, receiver, failed }
}

async function walkFullLoan(target: TestApi): Promise<string> {
  const loanId = await issueLoan(target)
  const path = `/api/sandbox/loans/${loanId}/repayment-flow`
  const started = await target.post(path, { action: 'start_payment', repayment_kind: 'full_principal' })
  const operation_id = started.body.sandboxFlow.repaymentOperations[0].operation_id
  for (const step of [{ action: 'confirm_usdt', tx_hash: 't', confirmations: 6 }, { action: 'run_kyt' }, { action: 'complete_settlement' }, { action: 'complete_collateral_return' }]) {
    expect((await target.post(path, { ...step, operation_id })).status).toBe(200)
  }
  return loanId
}

const FULL_LOAN_EVENTS = [
  'sandbox.loan_application.updated', 'sandbox.loan_application.updated', 'sandbox.loan_application.updated', 'sandbox.loan.issued',
  'sandbox.repayment.updated', 'sandbox.repayment.updated', 'sandbox.repayment.updated', 'sandbox.repayment.settled', 'sandbox.collateral.returned',
]

describe('webhook delivery to a local receiver', () => {
  it('delivers every event of a full loan and repayment, signed, in order, exactly the bytes signed', async () => {
    const { api, receiver, secret } = await setup()
    const loanId = await walkFullLoan(api)
    const received = await receiver.waitFor(FULL_LOAN_EVENTS.length)
    expect(received.map((item) => item.headers['x-service-webhook-event'])).toEqual(FULL_LOAN_EVENTS)
    for (const item of received) {
      const verified = verifyWebhook({ secret, body: item.body, headers: item.headers as Record<string, string> })
      const event = JSON.parse(item.body)
      expect(verified.eventId).toBe(event.id)
      expect(event).toMatchObject({ type: item.headers['x-service-webhook-event'], api_version: '0.3.0' })
      expect(item.headers['x-service-webhook-id']).toBe(event.id)
      expect(item.headers['content-type']).toBe('application/json')
    }
    expect(JSON.parse(received[3]!.body).data.object.id).toBe(loanId)
    expect(JSON.parse(received.at(-1)!.body).data.object.status).toBe('closed')
    await api.sandbox.deliveriesIdle()
    const log = await api.get('/api/sandbox/webhooks')
    expect(log.body.deliveries).toHaveLength(FULL_LOAN_EVENTS.length)
    expect(log.body.deliveries.every((delivery: { status: string; attempts: number; last_status_code: number }) => delivery.status === 'delivered' && delivery.attempts === 1 && delivery.last_status_code === 200)).toBe(true)
    expect(log.body.deliveries.map((delivery: { event_type: string }) => delivery.event_type)).toEqual([...FULL_LOAN_EVENTS].reverse())
  })

  it('retries on the schedule and holds later events back until the earlier one is delivered', async () => {
    const { api, receiver } = await setup()
    let failures = 2
    receiver.respond = () => (failures-- > 0 ? 500 : 200)
    await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.1, loan_amount: 1000 })
    await api.post('/api/sandbox/loans/flow', { action: 'confirm_btc', tx_hash: 't', confirmations: 2 })
    const received = await receiver.waitFor(4)
    const ids = received.map((item) => item.headers['x-service-webhook-id'])
    // Two failed attempts of the first event, then the first event, then the second.
    expect(ids[0]).toBe(ids[1])
    expect(ids[1]).toBe(ids[2])
    expect(ids[3]).not.toBe(ids[0])
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(25)
    await api.sandbox.deliveriesIdle()
    const [second, first] = (await api.get('/api/sandbox/webhooks')).body.deliveries
    expect(first).toMatchObject({ status: 'delivered', attempts: 3, last_status_code: 200, last_error: null })
    expect(second).toMatchObject({ status: 'delivered', attempts: 1 })
  })

  it('fails after the last attempt and delivers through the retry endpoint once the receiver is back', async () => {
    const { api, receiver, failed } = await setupFailedTestEvent()
    expect(failed).toMatchObject({ status: 'failed', attempts: 4, last_status_code: 503, next_attempt_at: null })
    expect(failed.last_error).toContain('503')

    receiver.respond = () => 204
    const retried = await api.post('/api/sandbox/webhooks/retry', {})
    expect(retried.status).toBe(200)
    expect(retried.body.retried).toEqual([failed.id])
    await receiver.waitFor(5)
    await wait(30)
    await api.sandbox.deliveriesIdle()
    // Every POST the receiver got is counted: four failed, then the one that delivered.
    expect((await api.get('/api/sandbox/webhooks')).body.deliveries[0]).toMatchObject({ id: failed.id, status: 'delivered', attempts: 5, last_status_code: 204 })
    const again = await api.post('/api/sandbox/webhooks/retry', { delivery_id: failed.id })
    expect(again.status).toBe(404)
    expect(again.body.error_code).toBe('WEBHOOK_DELIVERY_NOT_FOUND')
  })

  it('retries a delivery named twice in one batch once', async () => {
    const { api, receiver, failed } = await setupFailedTestEvent()
    expect(failed.status).toBe('failed')
    receiver.respond = () => 204
    const retried = await api.post('/api/sandbox/webhooks/retry', { delivery_id: failed.id, delivery_ids: [failed.id, failed.id] })
    expect(retried.body.retried).toEqual([failed.id])
    await receiver.waitFor(5)
    await wait(100)
    await api.sandbox.deliveriesIdle()
    expect(receiver.received).toHaveLength(5)
    const unknown = await api.post('/api/sandbox/webhooks/retry', { delivery_ids: ['whd_gone', 'whd_gone'] })
    expect([unknown.status, unknown.body.details]).toEqual([404, { delivery_ids: ['whd_gone'] }])
  })

  it('signs with the new secret after rotation, and stops delivering after DELETE while keeping the log', async () => {
    const { api, receiver, secret } = await setup()
    const rotated = await api.post('/api/sandbox/webhooks', { url: receiver.url, rotate_secret: true })
    const newSecret = rotated.body.endpoint.signingSecret
    expect(newSecret).toMatch(/^whsec_/)
    expect(newSecret).not.toBe(secret)
    await api.post('/api/sandbox/webhooks/test')
    const [item] = await receiver.waitFor(1)
    expect(() => verifyWebhook({ secret: newSecret, body: item!.body, headers: item!.headers as Record<string, string> })).not.toThrow()
    expect(() => verifyWebhook({ secret, body: item!.body, headers: item!.headers as Record<string, string> })).toThrow()

    await api.sandbox.deliveriesIdle()
    const deleted = await api.call('DELETE', '/api/sandbox/webhooks', { idempotencyKey: null })
    expect(deleted.status).toBe(200)
    expect(deleted.body.endpoint.enabled).toBe(false)
    expect(deleted.body.deliveries).toHaveLength(1)
    await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 })
    await wait(100)
    expect(receiver.received).toHaveLength(1)
    expect((await api.get('/api/sandbox/webhooks')).body.deliveries).toHaveLength(1)
    expect((await api.post('/api/sandbox/webhooks/test')).body.error_code).toBe('WEBHOOK_ENDPOINT_REQUIRED')
  })

  it('keeps deliveries waiting while the endpoint is disabled, and sends them in order to the URL registered on re-enable', async () => {
    const { api, receiver } = await setup({ webhookRetrySchedule: [150, 150, 150] })
    receiver.respond = () => 503
    await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 })
    await receiver.waitFor(1)
    expect((await api.call('DELETE', '/api/sandbox/webhooks', { idempotencyKey: null })).status).toBe(200)
    // Counted once the disable is in: on a busy machine the first 150 ms retry could go out
    // before the DELETE arrived, which is not what this test is about.
    await api.sandbox.deliveriesIdle()
    const beforeDisable = receiver.received.length
    await wait(400)
    // No attempt while disabled (over two retry steps): the refused ones before it are all the old receiver got.
    expect(receiver.received).toHaveLength(beforeDisable)
    const waiting = (await api.get('/api/sandbox/webhooks')).body.deliveries[0]
    expect(waiting).toMatchObject({ status: 'retrying', attempts: beforeDisable })
    expect((await api.post('/api/sandbox/webhooks/retry', { delivery_id: waiting.id })).status).toBe(200)
    await wait(200)
    expect(receiver.received).toHaveLength(beforeDisable)

    const moved = await startReceiver('/moved')
    try {
      expect((await api.post('/api/sandbox/webhooks', { url: moved.url })).body.endpoint.enabled).toBe(true)
      const [sent] = await moved.waitFor(1)
      expect(sent!.headers['x-service-webhook-event']).toBe('sandbox.loan.issued')
      await wait(50)
      await api.sandbox.deliveriesIdle()
      expect((await api.get('/api/sandbox/webhooks')).body.deliveries[0]).toMatchObject({ id: waiting.id, status: 'delivered', last_status_code: 200 })
      expect(receiver.received).toHaveLength(beforeDisable)
    } finally {
      await moved.close()
    }
  })

  it('delivers only the subscribed event types', async () => {
    const { api, receiver } = await setup()
    await api.post('/api/sandbox/webhooks', { url: receiver.url, events: ['sandbox.loan.issued'] })
    await issueLoan(api)
    await receiver.waitFor(1)
    await wait(50)
    expect(receiver.received.map((item) => item.headers['x-service-webhook-event'])).toEqual(['sandbox.loan.issued'])
    // The test event checks the receiver, whatever the subscription.
    expect((await api.post('/api/sandbox/webhooks/test')).status).toBe(200)
    await receiver.waitFor(2)
    expect(receiver.received.map((item) => item.headers['x-service-webhook-event'])).toEqual(['sandbox.loan.issued', 'sandbox.webhook.test'])
  })

  it('forwards every key\'s events to --webhook-forward-to, signed with the forward secret', async () => {
    receiver = await startReceiver('/forward')
    api = await createTestApi({ webhookForwardTo: receiver.url })
    expect(api.sandbox.forwardSecret).toMatch(/^whsec_/)
    await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 }, { key: newKey('one') })
    await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 }, { key: newKey('two') })
    const received = await receiver.waitFor(2)
    for (const item of received) {
      expect(verifyWebhook({ secret: api.sandbox.forwardSecret!, body: item.body, headers: item.headers as Record<string, string> }).eventType).toBe('sandbox.loan.issued')
    }
  })

  it('sends the test event to the key\'s endpoint and forwards it too, each signed with its own secret', async () => {
    const forward = await startReceiver('/forward')
    try {
      const { api, receiver, secret } = await setup({ webhookForwardTo: forward.url })
      const sent = await api.post('/api/sandbox/webhooks/test')
      expect(sent.status).toBe(200)
      const [atEndpoint] = await receiver.waitFor(1)
      const [forwarded] = await forward.waitFor(1)
      expect(verifyWebhook({ secret, body: atEndpoint!.body, headers: atEndpoint!.headers as Record<string, string> }).eventType).toBe('sandbox.webhook.test')
      expect(verifyWebhook({ secret: api.sandbox.forwardSecret!, body: forwarded!.body, headers: forwarded!.headers as Record<string, string> }).eventType).toBe('sandbox.webhook.test')
      expect(forwarded!.headers['x-service-webhook-id']).toBe(sent.body.event.id)
      expect(forwarded!.body).toBe(atEndpoint!.body)
    } finally {
      await forward.close()
    }
  })

  it('shows with each delivery the request whose change queued its event, and null for one an earlier version stored', async () => {
    const storage = await createSandboxStorage({ kind: 'memory' })
    const { api: first, receiver } = await setup({ storage })
    const step = await first.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.1, loan_amount: 1000 })
    const test = await first.post('/api/sandbox/webhooks/test')
    expect(step.headers.get('x-request-id')).toBe(step.body.request_id)
    expect(test.body.delivery.request_id).toBe(test.body.request_id)
    await receiver.waitFor(2)
    await first.sandbox.deliveriesIdle()
    const log = (await first.get('/api/sandbox/webhooks')).body.deliveries as Array<{ event_type: string; status: string; request_id: string | null }>
    expect(log.map((delivery) => [delivery.event_type, delivery.status, delivery.request_id])).toEqual([
      ['sandbox.webhook.test', 'delivered', test.body.request_id],
      ['sandbox.loan_application.updated', 'delivered', step.body.request_id],
    ])
    // The same deliveries as a version before request ids stored them, on storage of their own.
    const [docKey] = await storage.getKeys('session')
    const doc = JSON.parse(String(await storage.getItemRaw(docKey!))) as { webhook: { deliveries: Array<Record<string, unknown>> } }
    expect(doc.webhook.deliveries.map((delivery) => delivery.request_id)).toEqual([step.body.request_id, test.body.request_id])
    for (const delivery of doc.webhook.deliveries) delete delivery.request_id
    await first.sandbox.close()
    const older = await createSandboxStorage({ kind: 'memory' })
    await older.setItemRaw(docKey!, JSON.stringify(doc))
    api = await createTestApi({ storage: older, allowLocalWebhooks: true })
    const key = first.key
    const shown = (await api.get('/api/sandbox/webhooks', key)).body.deliveries as Array<{ request_id: string | null }>
    expect(shown.map((delivery) => delivery.request_id)).toEqual([null, null])
  })

  it('refuses local targets at delivery time unless local webhooks are allowed', async () => {
    receiver = await startReceiver()
    // A name that resolved publicly at registration but points at loopback now (DNS rebinding).
    let answer = ['93.184.216.34']
    api = await createTestApi({ resolveHost: async () => answer, webhookRetrySchedule: [10] })
    expect((await api.post('/api/sandbox/webhooks', { url: 'https://rebind.partner.example/hook' })).status).toBe(200)
    answer = ['127.0.0.1']
    await api.post('/api/sandbox/webhooks/test')
    await wait(100)
    await api.sandbox.deliveriesIdle()
    const [delivery] = (await api.get('/api/sandbox/webhooks')).body.deliveries
    expect(delivery.status).toBe('failed')
    expect(delivery.last_error).toMatch(/forbidden|local/)
    expect(receiver.received).toHaveLength(0)
  })

  it('writes failed attempts within a second and at close, so they survive a restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-staged-'))
    try {
      receiver = await startReceiver()
      receiver.respond = () => 500
      const options = { storage: 'fs' as const, dataDir, allowLocalWebhooks: true, webhookRetrySchedule: [60_000] }
      const first = await createTestApi(options)
      api = first
      await first.post('/api/sandbox/webhooks', { url: receiver.url })
      await first.post('/api/sandbox/webhooks/test')
      await receiver.waitFor(1)
      await first.sandbox.deliveriesIdle()
      const [retrying] = (await first.get('/api/sandbox/webhooks')).body.deliveries
      expect(retrying).toMatchObject({ status: 'retrying', attempts: 1, last_status_code: 500 })

      // What is on disk, read past the server's cache: the attempt arrives there by itself.
      const storedAttempts = async () => {
        const [docKey] = await first.sandbox.storage.getKeys('session')
        const stored = await first.sandbox.storage.getItem<{ webhook: { deliveries: Array<{ attempts: number }> } }>(docKey!)
        return stored!.webhook.deliveries[0]!.attempts
      }
      const deadline = Date.now() + 3000
      while ((await storedAttempts()) !== 1 && Date.now() < deadline) await wait(50)
      expect(await storedAttempts()).toBe(1)

      // A retry (stored as pending, its attempts still counted) fails again on a fresh schedule,
      // so it is retrying, not failed: written by close, not the timer.
      expect((await first.post('/api/sandbox/webhooks/retry', { delivery_id: retrying.id })).body.deliveries[0]).toMatchObject({ status: 'pending', attempts: 1 })
      await receiver.waitFor(2)
      await first.sandbox.deliveriesIdle()
      const [failedAgain] = (await first.get('/api/sandbox/webhooks')).body.deliveries
      expect(failedAgain).toMatchObject({ status: 'retrying', attempts: 2, last_status_code: 500 })
      await first.sandbox.close()
      api = await createTestApi(options)
      expect((await api.get('/api/sandbox/webhooks', first.key)).body.deliveries[0]).toEqual(failedAgain)
    } finally {
      await api?.sandbox.close()
      api = undefined
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
