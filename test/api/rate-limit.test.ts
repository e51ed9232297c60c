import { afterEach, describe, expect, it, vi } from 'vitest'
import { createTestApi, newKey, type TestApi } from '../helpers/api.js'

let api: TestApi
afterEach(async () => {
  vi.useRealTimers()
  await api?.sandbox.close()
})

describe('rate limit', () => {
  it('counts every authenticated request per key and answers 429 with Retry-After past the limit', async () => {
    api = await createTestApi({ rateLimit: { limit: 5, windowSeconds: 10 } })
    const remaining: string[] = []
    for (let i = 0; i < 5; i++) {
      const answer = await api.get(i % 2 ? '/api/sandbox/loans' : '/api/sandbox/config')
      expect(answer.status).toBe(200)
      expect(answer.headers.get('ratelimit-limit')).toBe('5')
      expect(Number(answer.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1)
      remaining.push(answer.headers.get('ratelimit-remaining')!)
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0'])
    const limited = await api.post('/api/sandbox/loans/flow', { action: 'run_kyt' })
    expect(limited.status).toBe(429)
    expect(limited.body.error_code).toBe('SANDBOX_RATE_LIMIT_EXCEEDED')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(10)
    expect(limited.headers.get('ratelimit-remaining')).toBe('0')

    const other = await api.get('/api/sandbox/config', newKey('other'))
    expect(other.status).toBe(200)
    expect(other.headers.get('ratelimit-remaining')).toBe('4')
  })

  it('frees slots as the window slides', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    api = await createTestApi({ rateLimit: { limit: 2, windowSeconds: 10 } })
    expect((await api.get('/api/sandbox/config')).status).toBe(200)
    vi.setSystemTime(Date.now() + 6000)
    expect((await api.get('/api/sandbox/config')).status).toBe(200)
    expect((await api.get('/api/sandbox/config')).status).toBe(429)
    vi.setSystemTime(Date.now() + 4500)
    const freed = await api.get('/api/sandbox/config')
    expect(freed.status).toBe(200)
    expect(freed.headers.get('ratelimit-remaining')).toBe('0')
  })

  it('does not count or limit unauthenticated requests, and sends no headers when off', async () => {
    api = await createTestApi({ rateLimit: { limit: 1, windowSeconds: 60 } })
    for (let i = 0; i < 3; i++) {
      const refused = await api.call('GET', '/api/sandbox/config', { key: null })
      expect(refused.status).toBe(401)
      // No key, no window to show.
      expect(refused.headers.get('ratelimit-limit')).toBeNull()
    }
    expect((await api.get('/api/sandbox/config')).status).toBe(200)
    await api.sandbox.close()
    api = await createTestApi({ rateLimit: false })
    for (let i = 0; i < 200; i++) expect((await api.get('/api/sandbox/config')).status).toBe(200)
    expect((await api.get('/api/sandbox/config')).headers.get('ratelimit-limit')).toBeNull()
  })

  it('shows a known key\'s window on 404 and 405 answers without counting them', async () => {
    api = await createTestApi({ rateLimit: { limit: 3, windowSeconds: 60 } })
    expect((await api.get('/api/sandbox/config')).headers.get('ratelimit-remaining')).toBe('2')
    for (const [method, path, status] of [['GET', '/api/sandbox/nothing', 404], ['DELETE', '/api/sandbox/loans', 405], ['GET', '/elsewhere', 404]] as const) {
      const answer = await api.call(method, path)
      expect([path, answer.status]).toEqual([path, status])
      expect([path, answer.headers.get('ratelimit-limit'), answer.headers.get('ratelimit-remaining'), answer.headers.get('retry-after')]).toEqual([path, '3', '2', null])
      expect(Number(answer.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1)
    }
    expect((await api.get('/api/sandbox/config')).headers.get('ratelimit-remaining')).toBe('1')
    // A key never seen yet has its whole window; a malformed one has none.
    expect((await api.call('GET', '/api/sandbox/nothing', { key: newKey('fresh') })).headers.get('ratelimit-remaining')).toBe('3')
    expect((await api.call('GET', '/api/sandbox/nothing', { key: 'sk_live_x' })).headers.get('ratelimit-limit')).toBeNull()
  })

  it('applies the spec default of 120 per 60 s', async () => {
    api = await createTestApi({ rateLimit: undefined })
    const answer = await api.get('/api/sandbox/config')
    expect(answer.headers.get('ratelimit-limit')).toBe('120')
    expect(answer.headers.get('ratelimit-remaining')).toBe('119')
  })
})
