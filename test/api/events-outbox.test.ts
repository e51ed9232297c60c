import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { deriveKeyId } from '../../src/server/auth.js'
import { createTestApi, issueLoan, type TestApi } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'

let api: TestApi
let receiver: TestReceiver
beforeEach(async () => {
  receiver = await startReceiver()
})
afterEach(async () => {
  await api?.sandbox.close()
  await receiver.close()
})

interface StoredEvent { id: string; type: string; api_version: string; data: { object: { id?: string; operation_id?: string; status: string } } }

/**
 * The events a key's commits produced, in order, as stored in its session document: the outbox
 * is turned into deliveries in the same write, so with a forward target every event has one.
 */
async function readOutbox(key: string): Promise<StoredEvent[]> {
  const doc = await api.sandbox.storage.getItem<{ outbox: StoredEvent[]; webhook: { deliveries: Array<{ event?: StoredEvent; event_id: string }> } }>(`session:${deriveKeyId(key)}:default`)
  expect(doc!.outbox).toEqual([])
  await api.sandbox.deliveriesIdle()
  return receiver.received.map((item) => JSON.parse(item.body) as StoredEvent)
}

async function createApi() {
  api = await createTestApi({ webhookForwardTo: receiver.url })
  return api
}

describe('event outbox', () => {
  it('records the spec event of every state change, in order, with the changed object', async () => {
    api = await createApi()
    const loanId = await issueLoan(api)
    const path = `/api/sandbox/loans/${loanId}/repayment-flow`
    const started = await api.post(path, { action: 'start_payment', repayment_kind: 'full_principal' })
    const operation_id = started.body.sandboxFlow.repaymentOperations[0].operation_id
    for (const step of [{ action: 'confirm_usdt', tx_hash: 't', confirmations: 12 }, { action: 'run_kyt' }, { action: 'complete_settlement' }, { action: 'complete_collateral_return' }]) {
      expect((await api.post(path, { ...step, operation_id })).status).toBe(200)
    }
    await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }) // refused: no event

    const outbox = await readOutbox(api.key)
    expect(outbox.map((event) => event.type)).toEqual([
      'sandbox.loan_application.updated',
      'sandbox.loan_application.updated',
      'sandbox.loan_application.updated',
      'sandbox.loan.issued',
      'sandbox.repayment.updated',
      'sandbox.repayment.updated',
      'sandbox.repayment.updated',
      'sandbox.repayment.settled',
      'sandbox.collateral.returned',
    ])
    expect(outbox.map((event) => event.data.object.status)).toEqual([
      'awaiting_collateral', 'collateral_confirmed', 'kyt_completed', 'active',
      'awaiting_payment', 'payment_confirmed', 'kyt_completed', 'settled', 'closed',
    ])
    expect(new Set(outbox.map((event) => event.id)).size).toBe(outbox.length)
    expect(outbox.every((event) => event.id.startsWith('evt_') && event.api_version === '0.3.0')).toBe(true)
    expect(outbox[3]!.data.object.id).toBe(loanId)
  })

  it('records sandbox.loan.updated for direct actions, and collateral.returned when collateral leaves', async () => {
    api = await createApi()
    const loanId = await issueLoan(api)
    await api.post(`/api/sandbox/loans/${loanId}/action`, { action: 'add_collateral', amount: 0.1 })
    await api.post(`/api/sandbox/loans/${loanId}/action`, { action: 'remove_collateral', amount: 0.1 })
    const types = (await readOutbox(api.key)).slice(4).map((event) => event.type)
    expect(types).toEqual(['sandbox.loan.updated', 'sandbox.loan.updated', 'sandbox.collateral.returned'])
  })

  it('does not record events on a replay', async () => {
    api = await createApi()
    await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 }, { idempotencyKey: 'once' })
    await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 }, { idempotencyKey: 'once' })
    expect((await readOutbox(api.key)).map((event) => event.type)).toEqual(['sandbox.loan.issued'])
  })

  it('shows a forward URL in the delivery log without its password', async () => {
    const url = new URL(receiver.url)
    url.username = 'ops'
    url.password = 's3cret'
    api = await createTestApi({ webhookForwardTo: url.href })
    await issueLoan(api)
    await api.sandbox.deliveriesIdle()
    const { body } = await api.get('/api/sandbox/webhooks')
    expect(body.deliveries.length).toBeGreaterThan(0)
    expect(JSON.stringify(body)).not.toContain('s3cret')
    expect(body.deliveries[0].url).toBe(`${url.protocol}//ops:***@${url.host}${url.pathname}`)
    expect(receiver.received.length).toBe(body.deliveries.length)
  })
})
