import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createTestApi } from '../helpers/api.js'
import type { RequestLogEntry } from '../../src/server/request-log.js'

const HEADER = 'x-sandbox-ignored-fields'

describe('body fields a POST does not know', () => {
  it('are named in x-sandbox-ignored-fields and the request log: a misspelt optional field is a 200 that changed nothing', async () => {
    const seen: RequestLogEntry[] = []
    const api = await createTestApi({ onRequest: (entry) => seen.push(entry) })
    const created = await api.post('/api/sandbox/partner', { name: 'Acme Lending' })
    expect([created.status, created.headers.get(HEADER)]).toEqual([200, null])
    const idempotencyKey = randomUUID()
    const typo = await api.post('/api/sandbox/partner', { nmae: 'Acme Two', emial: 'dev@acme.example' }, { idempotencyKey })
    expect(typo.status).toBe(200)
    expect(typo.body.profile.name).toBe('Acme Lending')
    expect(typo.headers.get(HEADER)).toBe('nmae, emial')
    expect(seen.at(-1)).toMatchObject({ path: '/api/sandbox/partner', status: 200, ignored_fields: ['nmae', 'emial'] })
    expect(seen[0]).not.toHaveProperty('ignored_fields')
    // A replay is the stored answer: the header belongs to the request that ran.
    const replay = await api.post('/api/sandbox/partner', { nmae: 'Acme Two', emial: 'dev@acme.example' }, { idempotencyKey })
    expect([replay.body.idempotency_replayed, replay.headers.get(HEADER)]).toEqual([true, null])
    await api.sandbox.close()
  })

  it('tells an empty field name as "" (and a field named "" percent-encoded), never as an empty header', async () => {
    const seen: RequestLogEntry[] = []
    const api = await createTestApi({ onRequest: (entry) => seen.push(entry) })
    const empty = await api.post('/api/sandbox/partner', { name: 'Acme Lending', '': 1 })
    expect([empty.status, empty.headers.get(HEADER)]).toEqual([200, '""'])
    expect(seen.at(-1)).toMatchObject({ ignored_fields: ['""'] })
    const both = await api.post('/api/sandbox/partner', { '': 1, '""': 2, x: 3 })
    expect(both.headers.get(HEADER)).toBe('"", %22%22, x')
    await api.sandbox.close()
  })

  it('names a misspelt field of the loan flow, whose currency then defaults, and the fields of a refused step', async () => {
    const api = await createTestApi()
    const start = await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.5, loan_amount: 20000, loan_curency: 'USDC' })
    expect([start.status, start.headers.get(HEADER)]).toEqual([200, 'loan_curency'])
    expect(start.body.draft.loan_currency).toBe('USDT')
    const confirm = await api.post('/api/sandbox/loans/flow', { action: 'confirm_btc', tx_hash: 'tx_1', confirmations: 6 })
    expect([confirm.status, confirm.headers.get(HEADER)]).toEqual([200, null])
    // A refused step (409, stored) still names what it ignored.
    const early = await api.post('/api/sandbox/loans/flow', { action: 'complete_payout', loan_id: 'x' })
    expect([early.status, early.headers.get(HEADER)]).toEqual([409, 'loan_id'])
    await api.sandbox.close()
  })

  it('a 400 for a missing field or a value not allowed names the field or value a typo meant', async () => {
    const api = await createTestApi()
    const hints = async (path: string, body: Record<string, unknown>) => {
      const answer = await api.post(path, body)
      expect(answer.status, JSON.stringify(body)).toBe(400)
      return answer.body.error as string
    }
    // Found by the schema (a direct loan) and by the flow step that needs the field.
    expect(await hints('/api/sandbox/loans', { colateral_btc: 0.5, loan_amount: 2000 })).toBe('collateral_btc is required. The body has "colateral_btc", which is no field of this request: did you mean collateral_btc?')
    expect(await hints('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', colateral_btc: 0.5, loan_amount: 2000 })).toBe('collateral_btc is required for start_collateral_transfer. The body has "colateral_btc", which is no field of this request: did you mean collateral_btc?')
    expect(await hints('/api/sandbox/loans/flow', { action: 'start_colateral_transfer' })).toMatch(/\. Got "start_colateral_transfer": did you mean start_collateral_transfer\?$/)
    expect(await hints('/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 2000, loan_currency: 'USTD' })).toBe('loan_currency USTD is not supported. Did you mean USDT?')
    const loan = await api.post('/api/sandbox/loans', { collateral_btc: 0.01, loan_amount: 200 })
    const loanId = loan.body.activeLoans.at(-1).id as string
    expect(await hints(`/api/sandbox/loans/${loanId}/repayment-flow`, { action: 'start_payment', repayment_kind: 'partial_principal', amout: 5 })).toBe('amount is required for partial_principal. The body has "amout", which is no field of this request: did you mean amount?')
    // Nothing close: the message as it was.
    expect(await hints('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', btc: 0.5, loan_amount: 2000 })).toBe('collateral_btc is required for start_collateral_transfer.')
    await api.sandbox.close()
  })

  it('names the fields sent to DELETE webhooks, which takes no body, when it disables the endpoint', async () => {
    const api = await createTestApi({ allowLocalWebhooks: true })
    const refused = await api.call('DELETE', '/api/sandbox/webhooks', { body: { events: [] } })
    expect([refused.status, refused.headers.get(HEADER)]).toEqual([409, null])
    const registered = await api.post('/api/sandbox/webhooks', { url: 'http://127.0.0.1:9/webhooks' })
    expect(registered.status).toBe(200)
    const disabled = await api.call('DELETE', '/api/sandbox/webhooks', { body: { events: [] } })
    expect([disabled.status, disabled.body.endpoint.enabled, disabled.headers.get(HEADER)]).toEqual([200, false, 'events'])
    await api.sandbox.close()
  })

  it('names at most ten, percent-encoded, each cut at 64 characters, and says how many more', async () => {
    const seen: RequestLogEntry[] = []
    const api = await createTestApi({ onRequest: (entry) => seen.push(entry) })
    const long = 'x'.repeat(70)
    const body: Record<string, unknown> = { name: 'Acme', 'é ,x': 1, [long]: 1 }
    for (let i = 0; i < 10; i++) body[`extra_${i}`] = i
    const answer = await api.post('/api/sandbox/partner', body)
    expect(answer.status).toBe(200)
    const named = answer.headers.get(HEADER)!.split(', ')
    expect(named).toHaveLength(11)
    expect(named.slice(0, 2)).toEqual([encodeURIComponent('é ,x'), encodeURIComponent(`${'x'.repeat(64)}…`)])
    expect(named.at(-1)).toBe('+2 more')
    expect(seen.at(-1)!.ignored_fields).toEqual(['é ,x', `${'x'.repeat(64)}…`, ...Array.from({ length: 8 }, (_, i) => `extra_${i}`), '+2 more'])
    await api.sandbox.close()
  })

  it('names exactly ten in full, without a "+0 more", and a name of exactly 64 characters uncut', async () => {
    const api = await createTestApi()
    const edge = 'y'.repeat(64)
    const body: Record<string, unknown> = { name: 'Acme', [edge]: 1 }
    for (let i = 0; i < 9; i++) body[`extra_${i}`] = i
    const answer = await api.post('/api/sandbox/partner', body)
    expect(answer.status).toBe(200)
    expect(answer.headers.get(HEADER)!.split(', ')).toEqual([edge, ...Array.from({ length: 9 }, (_, i) => `extra_${i}`)])
    await api.sandbox.close()
  })

  it('names a key that its cut at 64 leaves no well-formed text (an emoji cut in half) instead of failing a request that was carried out', async () => {
    const api = await createTestApi()
    // A key that is itself half a character makes the body no UTF-8 JSON: refused before anything runs.
    const lone = await api.post('/api/sandbox/partner', { name: 'Acme Lending', '\ud800': 1 })
    expect([lone.status, lone.body.error_code, lone.headers.get(HEADER)]).toEqual([400, 'INVALID_JSON', null])
    const idempotencyKey = randomUUID()
    const body = { name: 'Acme Lending', [`${'x'.repeat(63)}😀`]: 1 }
    const answer = await api.post('/api/sandbox/partner', body, { idempotencyKey })
    expect([answer.status, answer.body.profile?.name]).toEqual([200, 'Acme Lending'])
    expect(answer.headers.get(HEADER)!.split(', ').map(decodeURIComponent)).toEqual([`${'x'.repeat(63)}…`])
    const replay = await api.post('/api/sandbox/partner', body, { idempotencyKey })
    expect([replay.status, replay.body.idempotency_replayed]).toEqual([200, true])
    await api.sandbox.close()
  })

  it('is absent on a validation error (the error names the field) and on GETs', async () => {
    const api = await createTestApi()
    const refused = await api.post('/api/sandbox/loans', { collateral_btc: 'half', loan_amount: 20000, extra: 1 })
    expect([refused.status, refused.headers.get(HEADER)]).toEqual([400, null])
    const read = await api.get('/api/sandbox/config')
    expect(read.headers.get(HEADER)).toBeNull()
    await api.sandbox.close()
  })
})
