import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import { buildRequest, createTestApi, LOAN, newKey, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => api?.sandbox.close())

describe('idempotency', () => {
  it('requires an Idempotency-Key on every POST and checks its format', async () => {
    api = await createTestApi()
    const missing = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: null })
    expect(missing.status).toBe(400)
    expect(missing.body.error_code).toBe('IDEMPOTENCY_KEY_REQUIRED')
    const long = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'k'.repeat(256) })
    expect(long.status).toBe(400)
    expect(long.body.error_code).toBe('INVALID_REQUEST')
    const fine = await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'k'.repeat(255) })
    expect(fine.status).toBe(200)
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
    await api.post('/api/sandbox/loans', LOAN, { idempotencyKey: 'same' })
    const otherBody = await api.post('/api/sandbox/loans', { ...LOAN, loan_amount: 1000 }, { idempotencyKey: 'same' })
    expect(otherBody.status).toBe(409)
    expect(otherBody.body.error_code).toBe('IDEMPOTENCY_KEY_CONFLICT')
    const otherPath = await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' }, { idempotencyKey: 'same' })
    expect(otherPath.body.error_code).toBe('IDEMPOTENCY_KEY_CONFLICT')
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
})
