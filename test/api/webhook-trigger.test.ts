import { afterEach, describe, expect, it } from 'vitest'
import { EVENT_TYPES } from '../../src/webhooks/types.js'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { triggerEvent, TriggerUsageError } from '../../src/webhook-tools/trigger-event.js'
import { retryDeliveries } from '../../src/webhook-tools/retry-deliveries.js'
import { TriggerLoanNotFoundError, TriggerRefusedError } from '../../src/webhook-tools/trigger-walks.js'
import type { SandboxOptions } from '../../src/server/sandbox-types.js'
import { createTestApi, listenTestApi, type TestApi } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

/** A sandbox on a real port forwarding every event to a receiver; the retry schedule is short. */
async function setup(options: { respond?: number; forward?: boolean; retrySchedule?: number[]; config?: SandboxOptions['config']; faults?: SandboxOptions['faults'] } = {}) {
  const receiver: TestReceiver = await startReceiver('/hooks')
  stops.push(() => receiver.close())
  receiver.respond = () => options.respond ?? 200
  const api: TestApi = await createTestApi({
    allowLocalWebhooks: true,
    webhookRetrySchedule: options.retrySchedule ?? [100, 100],
    ...(options.config ? { config: options.config } : {}),
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.forward === false ? {} : { webhookForwardTo: receiver.url }),
  })
  stops.push(() => api.sandbox.close())
  const listener = await listenTestApi(api.sandbox)
  stops.push(() => listener.close())
  return { api, receiver, baseUrl: listener.url, apiKey: api.key, secret: api.sandbox.forwardSecret! }
}

const typesOf = (bodies: Array<{ body: string }>) => bodies.map((entry) => JSON.parse(entry.body).type as string)

describe('triggerEvent', () => {
  it.each(EVENT_TYPES.filter((type) => type !== 'sandbox.webhook.test'))('makes the server send %s, signed, in walk order, and leaves no open flow', async (event) => {
    const { api, receiver, baseUrl, apiKey, secret } = await setup()
    const report = await triggerEvent({ baseUrl, apiKey, event, waitMs: 5000 })
    const sent = report.requests.flatMap((request) => request.events)
    expect(sent).toContain(event)
    expect(report.problem).toBeNull()
    // Every event the walk says it sent reached the receiver, in that order, signed with the forward secret.
    const received = await receiver.waitFor(sent.length)
    expect(typesOf(received)).toEqual(sent)
    for (const entry of received) expect(() => verifyWebhook({ secret, body: entry.body, headers: entry.headers })).not.toThrow()
    expect(report.deliveries.map((delivery) => [delivery.event_type, delivery.status])).toEqual(sent.map((type) => [type, 'delivered']))
    // The key can start its next flow: no application or repayment left open.
    const state = (await api.get('/api/sandbox/loans')).body
    expect(state.draft).toBeNull()
    expect(state.sandboxFlow.repaymentOperations.filter((operation: { status: string }) => !['settled', 'collateral_returned'].includes(operation.status))).toEqual([])
  })

  it('sends the test event to the key\'s endpoint, and says so when the key has none', async () => {
    const { api, receiver, baseUrl, apiKey } = await setup({ forward: false })
    await expect(triggerEvent({ baseUrl, apiKey, event: 'sandbox.webhook.test' })).rejects.toMatchObject({ name: 'TriggerRefusedError', errorCode: 'WEBHOOK_ENDPOINT_REQUIRED' })
    expect((await api.post('/api/sandbox/webhooks', { url: receiver.url })).status).toBe(200)
    const report = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.webhook.test', waitMs: 5000 })
    expect(report).toMatchObject({ problem: null, endpoint: { url: receiver.url, enabled: true } })
    expect(typesOf(await receiver.waitFor(1))).toEqual(['sandbox.webhook.test'])
  })

  it('refuses an event type it does not know before any request, naming the one meant', async () => {
    // From JavaScript or a string read from a config: this was "WALKS[event] is not a function",
    // after a request to the server.
    const unreachable = { baseUrl: 'http://127.0.0.1:1', apiKey: 'sk_sandbox_trigger_unknown_0001', retries: 0 }
    await expect(triggerEvent({ ...unreachable, event: 'sandbox.loan.isued' as 'sandbox.loan.issued' })).rejects.toThrow(
      new TriggerUsageError(`unknown event "sandbox.loan.isued" (did you mean sandbox.loan.issued?): one of ${EVENT_TYPES.join(', ')}`),
    )
    await expect(triggerEvent({ ...unreachable, event: 'loan.issued' as 'sandbox.loan.issued' })).rejects.toThrow('unknown event "loan.issued" (did you mean sandbox.loan.issued?)')
  })

  it('refuses a loan for an event that takes none, saying whether the event opens a loan of its own or involves none', async () => {
    // partner.updated and webhook.test were said to make "their own" loan, which they do not.
    const unreachable = { baseUrl: 'http://127.0.0.1:1', apiKey: 'sk_sandbox_trigger_loan_0001', retries: 0, loanId: 'loan_1' }
    const only = 'a loan applies only to sandbox.loan.updated, sandbox.repayment.updated, sandbox.repayment.settled, sandbox.collateral.returned'
    for (const event of ['sandbox.loan.issued', 'sandbox.loan_application.updated'] as const) {
      await expect(triggerEvent({ ...unreachable, event }), event).rejects.toThrow(new TriggerUsageError(`${only}; ${event} opens a loan of its own`))
    }
    for (const event of ['sandbox.partner.updated', 'sandbox.webhook.test'] as const) {
      await expect(triggerEvent({ ...unreachable, event }), event).rejects.toThrow(new TriggerUsageError(`${only}; ${event} involves no loan`))
    }
  })

  it('acts on the loan it is given instead of opening one', async () => {
    const { api, receiver, baseUrl, apiKey } = await setup()
    const opened = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.loan.issued', waitMs: 5000 })
    const loanId = JSON.parse(receiver.received[0]!.body).data.object.id as string
    expect(opened.requests.at(-1)).toMatchObject({ method: 'POST', path: '/api/sandbox/loans', status: 200 })
    const report = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.loan.updated', loanId, waitMs: 5000 })
    expect(report.requests.map((request) => `${request.method} ${request.path} ${request.action ?? ''}`.trim())).toEqual([
      'GET /api/sandbox/config', 'GET /api/sandbox/loans', `POST /api/sandbox/loans/${loanId}/action add_collateral`,
    ])
    const updated = JSON.parse((await receiver.waitFor(2))[1]!.body)
    expect(updated).toMatchObject({ type: 'sandbox.loan.updated', data: { object: { id: loanId } } })
    expect((await api.get('/api/sandbox/loans')).body.activeLoans).toHaveLength(1)
    await expect(triggerEvent({ baseUrl, apiKey, event: 'sandbox.collateral.returned', loanId: 'loan_nope' })).rejects.toBeInstanceOf(TriggerLoanNotFoundError)
    await expect(triggerEvent({ baseUrl, apiKey, event: 'sandbox.loan.issued', loanId })).rejects.toMatchObject({ name: 'TriggerUsageError' })
  })

  it('sizes a new loan to the key\'s wallet when twice the LTV\'s collateral would not fit (the 2 BTC wallet against a config with large loans)', async () => {
    // 12,000 USDT at 40% LTV and 30,000 USD/BTC needs 1 BTC: twice that is the whole wallet.
    const config = { rates: { btc_usd: 30_000 }, risk: { max_ltv_percent: 40 }, limits: { loan_amount: { min: 12_000, max: 50_000 }, collateral_btc: { min: 0.5, max: 3 } } }
    const { api, baseUrl, apiKey } = await setup({ config })
    // The added collateral must still fit after the loan: 1.5 BTC on the loan, 0.5 added.
    const updated = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.loan.updated', waitMs: 5000 })
    expect(updated.problem).toBeNull()
    expect((await api.get('/api/sandbox/loans')).body.wallet.BTC).toBe(0)
    // 20,000 USDT needs 1.67 BTC: twice that, 3 BTC (the config's maximum), is over the 2 BTC wallet.
    const config20k = { ...config, limits: { ...config.limits, loan_amount: { min: 20_000, max: 50_000 } } }
    const bigger = await createTestApi({ config: config20k })
    stops.push(() => bigger.sandbox.close())
    const biggerListener = await listenTestApi(bigger.sandbox)
    stops.push(() => biggerListener.close())
    await triggerEvent({ baseUrl: biggerListener.url, apiKey: bigger.key, event: 'sandbox.loan_application.updated' })
    expect((await bigger.get('/api/sandbox/loans')).body).toMatchObject({ wallet: { BTC: 0 }, activeLoans: [{ collateral: 2 }] })
  })

  it('borrows in USDT when the config lists another currency before it', async () => {
    // A config without USDT is refused at start (spec 4.3); chooseSmallLoan still borrows in a
    // remote server's first currency should one list no USDT (trigger-small-loan.test.ts).
    const { api, baseUrl, apiKey } = await setup({ config: { currencies: ['USDC', 'USDT'] } })
    const report = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.repayment.settled', waitMs: 5000 })
    expect(report.problem).toBeNull()
    expect((await api.get('/api/sandbox/loans')).body.activeLoans).toMatchObject([{ currency: 'USDT' }])
  })

  it('explains why nothing was queued: no endpoint, or one not subscribed to the event', async () => {
    const { api, baseUrl, apiKey, receiver } = await setup({ forward: false })
    const none = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.partner.updated' })
    expect(none.deliveries).toEqual([])
    expect(none.problem).toMatch(/no delivery of sandbox\.partner\.updated was queued: this key has no webhook endpoint .*--webhook-forward-to/)
    await api.post('/api/sandbox/webhooks', { url: receiver.url, events: ['sandbox.loan.issued'] })
    const unsubscribed = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.partner.updated' })
    expect(unsubscribed.problem).toMatch(/subscribed to sandbox\.loan\.issued only/)
    // Deliveries of the walk's other events were queued, but none of the one asked for.
    await api.post('/api/sandbox/webhooks', { url: receiver.url, events: ['sandbox.repayment.updated'] })
    const partly = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.repayment.settled' })
    expect(partly.deliveries.map((delivery) => delivery.event_type)).toEqual(Array(3).fill('sandbox.repayment.updated'))
    expect(partly.problem).toMatch(/^no delivery of sandbox\.repayment\.settled was queued: this key's endpoint is subscribed to sandbox\.repayment\.updated only/)
    await api.call('DELETE', '/api/sandbox/webhooks')
    expect((await triggerEvent({ baseUrl, apiKey, event: 'sandbox.loan.issued' })).problem).toMatch(/endpoint is disabled/)
  })

  it('reports only the deliveries its own walk queued, and acts on the loan it opened, not an older one', async () => {
    const { api, baseUrl, apiKey } = await setup()
    const first = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.loan.updated', waitMs: 5000 })
    const second = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.loan.updated', waitMs: 5000 })
    for (const report of [first, second]) {
      expect(report.deliveries.map((delivery) => delivery.event_type)).toEqual(['sandbox.loan.issued', 'sandbox.loan.updated'])
    }
    const loans = (await api.get('/api/sandbox/loans')).body.activeLoans as Array<{ id: string }>
    expect(loans).toHaveLength(2)
    expect([first, second].map((report) => report.requests.at(-1)!.path)).toEqual(loans.map((loan) => `/api/sandbox/loans/${loan.id}/action`))
    // The config is read once per walk, though both the new loan and the collateral added need it.
    expect(second.requests.map((request) => `${request.method} ${request.path} ${request.action ?? ''}`.trim())).toEqual([
      'GET /api/sandbox/config', 'GET /api/sandbox/loans', 'POST /api/sandbox/loans', `POST /api/sandbox/loans/${loans[1]!.id}/action add_collateral`,
    ])
  })

  it('run at once on one key, each trigger reports the deliveries of its own requests only', async () => {
    const { baseUrl, apiKey } = await setup()
    const reports = await Promise.all(Array.from({ length: 3 }, () => triggerEvent({ baseUrl, apiKey, event: 'sandbox.loan.issued', waitMs: 5000 })))
    for (const report of reports) {
      expect(report.problem).toBeNull()
      expect(report.deliveries.map((delivery) => [delivery.event_type, delivery.status])).toEqual([['sandbox.loan.issued', 'delivered']])
      expect(report.deliveries[0]!.request_id).toBe(report.requests.find((request) => request.events.length > 0)!.request_id)
    }
    expect(new Set(reports.map((report) => report.deliveries[0]!.event_id)).size).toBe(3)
  })

  it('finds its deliveries when an answer was lost and the retry got the stored one, whose request_id is the retry\'s', async () => {
    const { baseUrl, apiKey } = await setup({ faults: { seed: 1, rules: [{ method: 'POST', path: '/api/sandbox/loans', fault: 'drop_after', first_attempt: true }] } })
    const report = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.loan.issued', waitMs: 5000 })
    expect(report.problem).toBeNull()
    expect(report.requests.at(-1)).toMatchObject({ path: '/api/sandbox/loans', status: 200, replayed: true })
    expect(report.deliveries.map((delivery) => [delivery.event_type, delivery.status])).toEqual([['sandbox.loan.issued', 'delivered']])
  })

  it('with waitMs, reports deliveries the receiver refused until they failed for good', async () => {
    const { receiver, baseUrl, apiKey } = await setup({ respond: 500 })
    const report = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.partner.updated', waitMs: 10_000 })
    expect(report.deliveries).toMatchObject([{ event_type: 'sandbox.partner.updated', status: 'failed', attempts: 3, last_status_code: 500 }])
    expect(report.problem).toMatch(/^1 of 1 not delivered after [\d.]+ s: the first, whd_\w+ \(sandbox\.partner\.updated to \w+ http:\/\/127\.0\.0\.1:\d+\/\w*\), is failed \(last answer: 500\); once the receiver answers 2xx, sandbox webhook retry whd_\w+ sends it again$/)
    expect(receiver.received).toHaveLength(3)
  })

  it('stops waiting when the next retry is due after the wait', async () => {
    const { baseUrl, apiKey } = await setup({ respond: 503, retrySchedule: [60_000] })
    const report = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.partner.updated', waitMs: 30_000 })
    expect(report.deliveries).toMatchObject([{ status: 'retrying', attempts: 1, last_status_code: 503 }])
    expect(report.waited_ms).toBeLessThan(30_000)
  })

  it('stops waiting for a delivery queued behind an earlier one whose retry is due after the wait, and names that one to retry', async () => {
    const { receiver, baseUrl, apiKey } = await setup({ respond: 503, retrySchedule: [60_000] })
    const down = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.partner.updated', waitMs: 30_000 })
    const blocker = down.deliveries[0]!
    expect(blocker).toMatchObject({ status: 'retrying', last_status_code: 503 })
    // The receiver is back, but the earlier delivery's next attempt is a minute away.
    receiver.respond = () => 200
    const behind = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.partner.updated', waitMs: 30_000 })
    expect(behind.deliveries).toMatchObject([{ status: 'pending', attempts: 0 }])
    expect(behind.waited_ms).toBeLessThan(30_000)
    expect(behind.problem).toBe(
      `1 of 1 not delivered after ${(behind.waited_ms! / 1000).toFixed(1)} s: the first, ${behind.deliveries[0]!.id} (sandbox.partner.updated to forward ${receiver.url}), is pending `
      + `behind ${blocker.id} (sandbox.partner.updated), an earlier delivery to the same receiver, retrying (last answer: 503; next attempt at ${blocker.next_attempt_at}): `
      + `deliveries to one receiver go in event order; sandbox webhook retry ${blocker.id} sends that one now, and the ones after it follow`,
    )
    // What the problem says to do works: both go out, in order.
    const retried = await retryDeliveries({ baseUrl, apiKey, deliveryIds: [blocker.id], waitMs: 10_000 })
    expect(retried).toMatchObject({ problem: null, deliveries: [{ id: blocker.id, status: 'delivered' }] })
    const bodies = await receiver.waitFor(3)
    expect(bodies.slice(1).map((entry) => JSON.parse(entry.body).id)).toEqual([blocker.event_id, behind.deliveries[0]!.event_id])
  })

  it('stops at the first refused request, naming it', async () => {
    const { api, baseUrl, apiKey } = await setup()
    // An application left open by the key's own flow: the walk's start is refused.
    await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.05, loan_amount: 1000 })
    const seen: string[] = []
    const error = await triggerEvent({ baseUrl, apiKey, event: 'sandbox.loan_application.updated', onRequest: (request) => seen.push(`${request.status} ${request.action ?? request.path}`) }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(TriggerRefusedError)
    expect((error as TriggerRefusedError).message).toMatch(/^POST \/api\/sandbox\/loans\/flow \(start_collateral_transfer\) answered 409 FLOW_CONFLICT: /)
    expect(seen).toEqual(['200 /api/sandbox/config', '200 /api/sandbox/loans', '409 start_collateral_transfer'])
  })
})
