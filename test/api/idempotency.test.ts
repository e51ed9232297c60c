import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { buildRequest, createTestApi, LOAN, newKey, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

describe('idempotency', () => {
  it('requires an Idempotency-Key on every POST and checks its format', async () => {
    api = await createTestApi()
    const missing = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: null })
    expect(missing.status).toBe(400)
    expect(missing.body.error_code).toBe('IDEMPOTENCY_KEY_REQUIRED')
    const empty = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: '' })
    expect([empty.status, empty.body.error_code]).toEqual([400, 'IDEMPOTENCY_KEY_REQUIRED'])
    const long = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'k'.repeat(256) })
    expect(long.status).toBe(400)
    expect(long.body.error_code).toBe('INVALID_REQUEST')
    const fine = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'k'.repeat(255) })
    expect(fine.status).toBe(200)
    expect((await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: '7' })).status).toBe(200)
    // Printable ASCII is 0x20 (space) to 0x7e: a space inside is fine, DEL (0x7f) is not.
    expect((await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'order 42 ~' })).status).toBe(200)
    const control = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'order\x7f42' })
    expect([control.status, control.body.error_code]).toEqual([400, 'INVALID_REQUEST'])
  })

  it('replays a retried POST without applying it twice', async () => {
    api = await createTestApi()
    const first = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'create-1' })
    const retry = await api.post('/api/sandbox/loans', { loan_currency: 'USDT', loan_amount: 20000, collateral_btc: 0.5 }, { idempotencyKey: 'create-1' })
    expect(retry.status).toBe(200)
    expect(retry.body.idempotency_replayed).toBe(true)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(retry.body.request_id).not.toBe(first.body.request_id)
    expect(retry.body.activeLoans).toEqual(first.body.activeLoans)
    const { body } = await api.get('/api/sandbox/loans')
    expect(body.activeLoans).toHaveLength(1)
    expect(body.wallet).toEqual({ BTC: 1.5, USDT: 29800 })
  })

  it('answers 409 IDEMPOTENCY_KEY_CONFLICT for the same key with another body or endpoint', async () => {
    api = await createTestApi()
    const first = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'same' })
    const otherBody = await api.post('/api/sandbox/loans', { ...LOAN, loan_amount: 1000 }, { idempotencyKey: 'same' })
    expect(otherBody.status).toBe(409)
    expect(otherBody.body.error_code).toBe('IDEMPOTENCY_KEY_CONFLICT')
    // The request that used the key first, to be found in the partner's logs and `sandbox logs`.
    expect(otherBody.body.details).toEqual({ first_request_id: first.body.request_id, first_used_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) })
    const otherPath = await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }, { idempotencyKey: 'same' })
    expect(otherPath.body.error_code).toBe('IDEMPOTENCY_KEY_CONFLICT')
  })

  it('takes a POST with no body and the same POST with {} as one request, as no body is read as {}', async () => {
    api = await createTestApi()
    const retry = '/api/sandbox/webhooks/retry'
    const bare = await api.call('POST', retry, { idempotencyKey: 'all-failed' })
    const braces = await api.call('POST', retry, { rawBody: '{}', idempotencyKey: 'all-failed' })
    expect([bare.status, bare.body.idempotency_replayed]).toEqual([200, false])
    expect([braces.status, braces.body.error_code, braces.body.idempotency_replayed]).toEqual([200, undefined, true])
    // The other way round, and a body of blanks, which is no body too.
    await api.call('POST', retry, { rawBody: '{}', idempotencyKey: 'braces-first' })
    const blank = await api.call('POST', retry, { rawBody: ' \n', idempotencyKey: 'braces-first' })
    expect([blank.status, blank.body.error_code, blank.body.idempotency_replayed]).toEqual([200, undefined, true])
    // Fields still count: {} is not a body that names one.
    const named = await api.call('POST', retry, { body: { delivery_id: 'whd_x' }, idempotencyKey: 'all-failed' })
    expect([named.status, named.body.error_code]).toEqual([409, 'IDEMPOTENCY_KEY_CONFLICT'])
  })

  it('stores 409 and 404 outcomes and replays them, but not 400 validation errors', async () => {
    api = await createTestApi()
    const conflict = await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }, { idempotencyKey: 'early' })
    expect(conflict.status).toBe(409)
    expect(conflict.body).not.toHaveProperty('idempotency_replayed')
    await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', ...LOAN })
    await api.post('/api/sandbox/loans/flow', { action: 'confirm_btc', tx_hash: 't', confirmations: 6 })
    // Now run_kyt would succeed, but the key remembers its first outcome.
    const replayed = await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }, { idempotencyKey: 'early' })
    expect(replayed.status).toBe(409)
    expect(replayed.body.error_code).toBe('FLOW_CONFLICT')
    expect(replayed.body.idempotency_replayed).toBe(true)

    const notFound = await api.post('/api/sandbox/loans/loan_x/action', { action: 'repay_interest', amount: 1 }, { idempotencyKey: 'nf' })
    expect(notFound.status).toBe(404)
    expect((await api.post('/api/sandbox/loans/loan_x/action', { action: 'repay_interest', amount: 1 }, { idempotencyKey: 'nf' })).body.idempotency_replayed).toBe(true)

    const invalid = await api.post('/api/sandbox/loans', { collateral_btc: 0.5 }, { idempotencyKey: 'fix-me' })
    expect(invalid.status).toBe(400)
    const corrected = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'fix-me' })
    expect(corrected.status).toBe(200)
    expect(corrected.body.idempotency_replayed).toBe(false)
  })

  it('scopes keys per API key', async () => {
    api = await createTestApi()
    const other = newKey('other')
    await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'shared' })
    const mine = await api.post('/api/sandbox/loans', { ...LOAN, loan_amount: 1000 }, { idempotencyKey: 'shared', key: other })
    expect(mine.status).toBe(200)
    expect(mine.body.idempotency_replayed).toBe(false)
  })

  it('answers concurrent duplicates with IDEMPOTENCY_KEY_IN_PROGRESS and applies the operation once', async () => {
    // Slow writes keep the first request running while its duplicates arrive.
    const memory = memoryDriver()
    const slow = defineDriver(() => ({
      ...memory,
      name: 'slow-memory',
      async setItem(key: string, value: string) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        return memory.setItem!(key, value, {})
      },
    }))
    api = await createTestApi({ storage: createStorage({ driver: slow(undefined) }) })
    const answers = await Promise.all(Array.from({ length: 8 }, () => api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'race' })))
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    for (const answer of answers.filter((item) => item.status !== 200)) {
      expect(answer.status).toBe(409)
      expect(answer.body.error_code).toBe('IDEMPOTENCY_KEY_IN_PROGRESS')
    }
    const { body } = await api.get('/api/sandbox/loans')
    expect(body.activeLoans).toHaveLength(1)
    const after = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'race' })
    expect(after.body.idempotency_replayed).toBe(true)
  })

  it('while a key\'s first request runs, answers another body with CONFLICT and another API key as its own', async () => {
    // The first write waits on a gate, so the first request is still running when the others arrive.
    const memory = memoryDriver()
    let release!: () => void
    let started!: () => void
    const gate = new Promise<void>((resolve) => { release = resolve })
    const firstWrite = new Promise<void>((resolve) => { started = resolve })
    let writes = 0
    const gated = defineDriver(() => ({
      ...memory,
      name: 'gated-memory',
      async setItem(key: string, value: string) {
        if (writes++ === 0) {
          started()
          await gate
        }
        return memory.setItem!(key, value, {})
      },
    }))
    api = await createTestApi({ storage: createStorage({ driver: gated(undefined) }) })
    const first = api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'held' })
    await firstWrite
    const otherBody = await api.post('/api/sandbox/loans', { ...LOAN, loan_amount: 1000 }, { idempotencyKey: 'held' })
    const sameBody = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'held' })
    const otherKey = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'held', key: newKey('other') })
    release()
    expect((await first).status).toBe(200)
    expect([otherBody.status, otherBody.body.error_code]).toEqual([409, 'IDEMPOTENCY_KEY_CONFLICT'])
    expect([sameBody.status, sameBody.body.error_code]).toEqual([409, 'IDEMPOTENCY_KEY_IN_PROGRESS'])
    expect([otherKey.status, otherKey.body.idempotency_replayed]).toEqual([200, false])
  })

  it('serializes different keys of one session: concurrent flows never lose an update', async () => {
    api = await createTestApi()
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 })))
    expect(answers.every((answer) => answer.status === 200)).toBe(true)
    const { body } = await api.get('/api/sandbox/loans')
    expect(body.activeLoans).toHaveLength(5)
    expect(body.wallet.BTC).toBe(1.5)
  })

  it('forgets an Idempotency-Key after 24 hours', async () => {
    api = await createTestApi()
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 }, { idempotencyKey: 'day-old' })
      vi.setSystemTime(Date.now() + 23 * 3600_000)
      expect((await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 }, { idempotencyKey: 'day-old' })).body.idempotency_replayed).toBe(true)
      vi.setSystemTime(Date.now() + 2 * 3600_000)
      const fresh = await api.post('/api/sandbox/loans', { collateral_btc: 0.1, loan_amount: 1000 }, { idempotencyKey: 'day-old' })
      expect(fresh.body.idempotency_replayed).toBe(false)
      expect(fresh.body.activeLoans).toHaveLength(2)
    } finally {
      vi.useRealTimers()
    }
  })

  it('keeps stored replays across a restart on fs storage', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-idem-'))
    try {
      const key = newKey()
      const first = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
      const original = await (await first.fetch(buildRequest('http://x', 'POST', '/api/sandbox/loans', { body: LOAN, idempotencyKey: 'persist' }, key))).json()
      // Enough further requests to move the first stored answer out of the session document.
      for (let i = 0; i < 20; i++) {
        await first.fetch(buildRequest('http://x', 'POST', '/api/sandbox/loans/flow', { body: { action: 'run_kyt' }, idempotencyKey: `filler-${i}` }, key))
      }
      await first.close()
      const second = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
      const replay = await second.fetch(buildRequest('http://x', 'POST', '/api/sandbox/loans', { body: LOAN, idempotencyKey: 'persist' }, key))
      const body = await replay.json()
      expect(replay.status).toBe(200)
      expect(body.idempotency_replayed).toBe(true)
      expect(body.activeLoans).toEqual(original.activeLoans)
      const loans = await (await second.fetch(buildRequest('http://x', 'GET', '/api/sandbox/loans', {}, key))).json()
      expect(loans.activeLoans).toHaveLength(1)
      await second.close()
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  it('keeps a change acknowledged while GETs of the same key read its document from disk (fs, just after a restart)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-idem-'))
    const key = newKey()
    const loan = (ref: string) => buildRequest('http://x', 'POST', '/api/sandbox/loans', { body: { collateral_btc: 0.01, loan_amount: 100, client_reference: ref }, idempotencyKey: ref }, key)
    const refs = async (sandbox: Sandbox) => {
      const state = await (await sandbox.fetch(buildRequest('http://x', 'GET', '/api/sandbox/loans', {}, key))).json()
      return state.activeLoans.map((item: { client_reference: string }) => item.client_reference).sort()
    }
    try {
      const setup = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
      expect((await setup.fetch(loan('setup'))).status).toBe(200)
      await setup.close()
      const expected = ['setup']
      for (let round = 0; round < 5; round++) {
        // A restart leaves the key's document on disk only; GETs poll while the POST commits.
        const sandbox = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
        const polls = Array.from({ length: 8 }, (_, i) => new Promise((resolve) => setTimeout(resolve, i)).then(() => refs(sandbox)))
        const [answer] = await Promise.all([sandbox.fetch(loan(`a${round}`)), ...polls])
        expect(answer.status).toBe(200)
        expect((await sandbox.fetch(loan(`b${round}`))).status).toBe(200)
        expected.push(`a${round}`, `b${round}`)
        expect(await refs(sandbox)).toEqual([...expected].sort())
        await sandbox.close()
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  it('replays the exact bytes of answers still in the session document after a restart on fs storage', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-idem-'))
    try {
      const key = newKey()
      const requests: Array<[string, object, string]> = [
        ['/api/sandbox/loans/flow', { action: 'start_collateral_transfer', collateral_btc: 0.01, loan_amount: 200 }, 'step-1'],
        ['/api/sandbox/loans/flow', { action: 'confirm_btc', tx_hash: 'tx "quoted" é', confirmations: 6 }, 'step-2'],
        ['/api/sandbox/loans/flow', { action: 'complete_payout' }, 'too-early'],
        ['/api/sandbox/partner', { name: 'Acme "Lending" ü', email: 'ops@acme.example' }, 'profile'],
      ]
      const first = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
      const originals: string[] = []
      for (const [path, body, idempotencyKey] of requests) {
        originals.push(await (await first.fetch(buildRequest('http://x', 'POST', path, { body, idempotencyKey }, key))).text())
      }
      await first.close()
      const second = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
      for (const [i, [path, body, idempotencyKey]] of requests.entries()) {
        const replay = await second.fetch(buildRequest('http://x', 'POST', path, { body, idempotencyKey }, key))
        const text = await replay.text()
        expect(text, idempotencyKey).toContain('"idempotency_replayed":true')
        // Everything else but the request's own id is the original answer, byte for byte.
        const strip = (answer: string) => answer.replace(/"request_id":"req_[0-9a-f]+"/, '').replace(/,"idempotency_replayed":(true|false)/, '')
        expect(strip(text), idempotencyKey).toBe(strip(originals[i]!))
      }
      expect(originals[2]).toContain('FLOW_CONFLICT')
      await second.close()
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })

  describe('a key with many closed loans', () => {
    const SMALL_LOAN = { collateral_btc: 0.1, loan_amount: 1000, loan_currency: 'USDT' }

    /** POSTs and returns the status and the exact answer text. */
    async function post(sandbox: Sandbox, key: string, path: string, body: object, idempotencyKey: string) {
      const response = await sandbox.fetch(buildRequest('http://x', 'POST', path, { body, idempotencyKey }, key))
      return { status: response.status, text: await response.text() }
    }

    /** Issues a loan and repays it whole (closing it): two stored answers, each holding the key's whole history. */
    async function closeLoans(sandbox: Sandbox, key: string, from: number, to: number): Promise<Map<string, string>> {
      const answers = new Map<string, string>()
      for (let i = from; i < to; i++) {
        const issued = await post(sandbox, key, '/api/sandbox/loans', SMALL_LOAN, `issue-${i}`)
        const loanId = (JSON.parse(issued.text) as { activeLoans: Array<{ id: string }> }).activeLoans[0]!.id
        const repaid = await post(sandbox, key, `/api/sandbox/loans/${loanId}/action`, { action: 'repay_principal', amount: 1000 }, `repay-${i}`)
        expect(repaid.status).toBe(200)
        answers.set(`issue-${i}`, issued.text).set(`repay-${i}`, repaid.text)
      }
      return answers
    }

    /** The answer text without what differs between an answer and its replay. */
    const sameAnswer = (text: string) => text.replace(/^\{"request_id":"\w+",/, '{').replace(/,"idempotency_replayed":(true|false)\}$/, '}')

    it('replays early and late answers byte for byte after more loans closed and a restart', async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'sandbox-idem-'))
      try {
        const key = newKey()
        const first = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
        const answers = await closeLoans(first, key, 0, 12)
        await post(first, key, '/api/sandbox/loans', SMALL_LOAN, 'still-active')
        await first.close()
        const second = await createSandbox({ storage: 'fs', dataDir, rateLimit: false })
        try {
          // repay-1 moved to a batch file long ago; repay-11 is still in the session document.
          for (const [idempotencyKey, index] of [['repay-1', 1], ['issue-6', 6], ['repay-11', 11]] as const) {
            const path = idempotencyKey.startsWith('issue') ? '/api/sandbox/loans' : null
            const original = answers.get(idempotencyKey)!
            const loanId = path ? null : (JSON.parse(original) as { loanHistory: Array<{ id: string }> }).loanHistory[index]!.id
            const replay = await post(second, key, path ?? `/api/sandbox/loans/${loanId}/action`, path ? SMALL_LOAN : { action: 'repay_principal', amount: 1000 }, idempotencyKey)
            expect(replay.status).toBe(200)
            expect(replay.text).toMatch(/"idempotency_replayed":true\}$/)
            expect(sameAnswer(replay.text)).toBe(sameAnswer(original))
          }
        } finally {
          await second.close()
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true })
      }
    })

    it('stores its answers in far less space than their text: closed loans are not stored again with each one', async () => {
      const storage = createStorage({ driver: memoryDriver() })
      const sandbox = await createSandbox({ storage, rateLimit: false })
      try {
        const answers = await closeLoans(sandbox, newKey(), 0, 30)
        await sandbox.flush()
        const answered = [...answers.values()].reduce((sum, text) => sum + text.length, 0)
        let stored = 0
        for (const key of await storage.getKeys()) stored += String(await storage.getItemRaw(key)).length
        // 60 answers of up to 30 loans each: ~0.8 MB of text; the book itself is ~0.05 MB.
        expect(answered).toBeGreaterThan(700_000)
        expect(stored).toBeLessThan(answered / 5)
      } finally {
        await sandbox.close()
      }
    })

    it('stores the answers of many actions on one loan without its growing history in each', async () => {
      const storage = createStorage({ driver: memoryDriver() })
      const sandbox = await createSandbox({ storage, rateLimit: false })
      try {
        const key = newKey()
        const issued = await post(sandbox, key, '/api/sandbox/loans', SMALL_LOAN, 'issue')
        const loanId = (JSON.parse(issued.text) as { activeLoans: Array<{ id: string }> }).activeLoans[0]!.id
        let answered = 0
        for (let i = 0; i < 200; i++) {
          const action = await post(sandbox, key, `/api/sandbox/loans/${loanId}/action`, { action: i % 2 ? 'remove_collateral' : 'add_collateral', amount: 0.01 }, `collateral-${i}`)
          expect(action.status).toBe(200)
          answered += action.text.length
        }
        await sandbox.flush()
        let stored = 0
        for (const name of await storage.getKeys()) stored += String(await storage.getItemRaw(name)).length
        // Each answer holds the loan's whole history (up to 200 entries): ~2 MB of text in all.
        expect(answered).toBeGreaterThan(1_500_000)
        expect(stored).toBeLessThan(answered / 3)
        const replay = await post(sandbox, key, `/api/sandbox/loans/${loanId}/action`, { action: 'add_collateral', amount: 0.01 }, 'collateral-20')
        expect(replay.text).toMatch(/"idempotency_replayed":true\}$/)
        expect(JSON.parse(replay.text).activeLoans[0].history).toHaveLength(JSON.parse(issued.text).activeLoans[0].history.length + 21)
      } finally {
        await sandbox.close()
      }
    })
  })
})