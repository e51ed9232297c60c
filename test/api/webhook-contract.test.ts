import { afterEach, describe, expect, it } from 'vitest'
import { EVENT_TYPES } from '../../src/webhooks/types.js'
import { createTestApi, issueLoan, type TestApi } from '../helpers/api.js'
import { checkDeliveryAgainstContract } from '../helpers/contract.js'
import { startReceiver, type Received, type TestReceiver } from '../helpers/receiver.js'

// Every test receiver checks what it gets against the document's `webhooks` entries; this file
// shows that each event type passes, and that the check catches a body a receiver could not type.

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Makes the sandbox send every event type once or more, and answers what the receiver got, in order. */
async function receiveEveryEventType(): Promise<Received[]> {
  const receiver: TestReceiver = await startReceiver()
  cleanups.push(() => receiver.close())
  const api: TestApi = await createTestApi({ allowLocalWebhooks: true })
  cleanups.push(() => api.sandbox.close())
  expect((await api.post('/api/sandbox/webhooks', { url: receiver.url })).status).toBe(200)
  const loanId = await issueLoan(api)
  expect((await api.post(`/api/sandbox/loans/${loanId}/action`, { action: 'add_collateral', amount: 0.1 })).status).toBe(200)
  const path = `/api/sandbox/loans/${loanId}/repayment-flow`
  const started = await api.post(path, { action: 'start_payment', repayment_kind: 'full_principal' })
  const operation_id = started.body.sandboxFlow.repaymentOperations[0].operation_id
  for (const step of [{ action: 'confirm_usdt', tx_hash: 't', confirmations: 6 }, { action: 'run_kyt' }, { action: 'complete_settlement' }, { action: 'complete_collateral_return' }]) {
    expect((await api.post(path, { ...step, operation_id })).status).toBe(200)
  }
  expect((await api.post('/api/sandbox/partner', { name: 'Acme Lending', email: 'dev@acme.example' })).status).toBe(200)
  expect((await api.post('/api/sandbox/webhooks/test')).status).toBe(200)
  // 3 application steps, the issue, the action, 5 repayment steps, the partner and the test event.
  return receiver.waitFor(12)
}

describe('webhook deliveries against the OpenAPI document', () => {
  it('every event type the sandbox sends keeps its webhook entry: headers, type and the shape of data.object', async () => {
    const received = await receiveEveryEventType()
    expect(new Set(received.map((item) => item.headers['x-service-webhook-event']))).toEqual(new Set(EVENT_TYPES))
    expect(received.flatMap((item) => checkDeliveryAgainstContract(item))).toEqual([])
  })

  it('refuses a delivery whose data.object is not what its event carries, or whose headers are wrong', async () => {
    const received = await receiveEveryEventType()
    const issued = received.find((item) => item.headers['x-service-webhook-event'] === 'sandbox.loan.issued')!
    const application = received.find((item) => item.headers['x-service-webhook-event'] === 'sandbox.loan_application.updated')!
    const event = JSON.parse(issued.body)
    const withObject = (object: unknown) => ({ ...issued, body: JSON.stringify({ ...event, data: { object } }) })
    const check = (delivery: Received) => checkDeliveryAgainstContract(delivery).join('\n')

    // An application where the loan belongs, a loan without its debt, a debt as text.
    expect(check(withObject(JSON.parse(application.body).data.object))).toContain('body/data/object must have required property \'principal\'')
    const { debt, ...noDebt } = event.data.object
    expect(check(withObject(noDebt))).toContain('body/data/object must have required property \'debt\'')
    expect(check(withObject({ ...event.data.object, debt: String(debt) }))).toContain('body/data/object/debt must be number')
    // The event header and the body disagree; a header missing or malformed; another event's id.
    expect(check({ ...issued, headers: { ...issued.headers, 'x-service-webhook-event': 'sandbox.loan.updated' } })).toContain('body/type must be equal to constant')
    const { 'x-service-webhook-signature': _signature, ...unsigned } = issued.headers
    expect(check({ ...issued, headers: unsigned })).toContain('header x-service-webhook-signature missing')
    expect(check({ ...issued, headers: { ...issued.headers, 'x-service-webhook-timestamp': '2026-11-22T12:00:00Z' } })).toContain('header x-service-webhook-timestamp "2026-11-22T12:00:00Z": value must match pattern')
    expect(check({ ...issued, headers: { ...issued.headers, 'x-service-webhook-id': 'evt_other' } })).toContain(`x-service-webhook-id evt_other differs from body id ${event.id}`)
    expect(check(issued)).toBe('')
  })
})
