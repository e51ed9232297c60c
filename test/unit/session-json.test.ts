import { describe, expect, it } from 'vitest'
import { stringifySessionDoc } from '../../src/server/session-json.js'
import { stringifyEvent } from '../../src/webhooks/event-json.js'
import type { SessionDoc } from '../../src/server/session-doc.js'

function sessionDoc(): SessionDoc {
  return {
    version: 1,
    created_at: '2026-11-22T10:00:00.000Z',
    book: { wallet: { BTC: 2, USDT: 1000 }, loans: [{ id: 'loan_1', status: 'active' }], applications: [], repayments: [], draftId: null } as unknown as SessionDoc['book'],
    partner: null,
    outbox: [],
    webhook: { endpoint: null, deliveries: [] },
    event_seq: 0,
    idempotency: [],
    response_batches: [],
    next_batch: 1,
  }
}

describe('stored text of a session document', () => {
  it('parses back to the document, with and without list elements', () => {
    const empty = sessionDoc()
    expect(JSON.parse(stringifySessionDoc(empty))).toEqual(empty)
    const full: SessionDoc = {
      ...empty,
      idempotency: [{ key: 'k1', fingerprint: 'f', status: 200, created_at: empty.created_at, response: '{"a":"\\"quoted\\""}' }],
      webhook: { endpoint: null, deliveries: [{ id: 'whd_1', event_id: 'evt_1', event_type: 'sandbox.loan.issued', target: 'forward', url: 'http://127.0.0.1/h', status: 'pending', attempts: 0, next_attempt_at: empty.created_at, last_status_code: null, last_error: null, created_at: empty.created_at, updated_at: empty.created_at, body: '{"id":"evt_1"}' }] },
    }
    expect(JSON.parse(stringifySessionDoc(full))).toEqual(full)
  })

  it('stores a delivery\'s event so that the text sent after a restart is the text before', () => {
    const event = { id: 'evt_1', type: 'sandbox.loan.issued', api_version: '0.3.0', created_at: 'now', data: { object: { id: 'loan_1', amount: 0.1, note: 'quote " and \\ back' } } }
    const doc = sessionDoc()
    const delivery = { id: 'whd_1', event_id: 'evt_1', event_type: 'sandbox.loan.issued', target: 'forward', url: 'http://127.0.0.1/h', status: 'pending', attempts: 0, next_attempt_at: 'now', last_status_code: null, last_error: null, created_at: 'now', updated_at: 'now', event }
    const withDelivery = { ...doc, webhook: { endpoint: null, deliveries: [delivery, { ...delivery, id: 'whd_2', target: 'endpoint' }] } } as unknown as SessionDoc
    const restored = JSON.parse(stringifySessionDoc(withDelivery)) as SessionDoc
    expect(restored).toEqual(withDelivery)
    expect(stringifyEvent(restored.webhook.deliveries[1]!.event!)).toBe(JSON.stringify(event))
  })

  it('shows a changed element: elements are replaced, never edited, so new objects are serialized anew', () => {
    const doc: SessionDoc = { ...sessionDoc(), idempotency: [{ key: 'k1', fingerprint: 'f', status: 200, created_at: 'then' }] }
    stringifySessionDoc(doc)
    const changed: SessionDoc = { ...doc, idempotency: [{ ...doc.idempotency[0]!, status: 409 }, { key: 'k2', fingerprint: 'g', status: 200, created_at: 'now' }] }
    expect(JSON.parse(stringifySessionDoc(changed)).idempotency).toEqual(changed.idempotency)
    const repaid = { ...changed, book: { ...changed.book, loans: [{ ...changed.book.loans[0]!, status: 'closed' }] } } as SessionDoc
    expect(JSON.parse(stringifySessionDoc(repaid))).toEqual(repaid)
  })

  it('sends an event whose object the book holds as exactly JSON.stringify of the event, whatever was serialized first', () => {
    const loan = { id: 'loan_9', status: 'active', principal: 200, note: 'a "quoted" \\ word' }
    const event = { id: 'evt_9', type: 'sandbox.loan.issued', created_at: 'now', api_version: '0.3.0', data: { object: loan } }
    const doc = { ...sessionDoc(), book: { ...sessionDoc().book, loans: [loan] } } as unknown as SessionDoc
    stringifySessionDoc(doc)
    expect(stringifyEvent(event as never)).toBe(JSON.stringify(event))
    const other = { id: 'evt_10', type: 'sandbox.loan.updated', data: { object: loan, previous: { status: 'pending' } }, created_at: 'later' }
    expect(stringifyEvent(other as never)).toBe(JSON.stringify(other))
  })
})
