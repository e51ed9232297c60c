import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi | undefined
afterEach(async () => {
  await api?.sandbox.close()
  api = undefined
})

/** A resolver the test answers by hand: names never reach real DNS. */
function createHeldResolver() {
  const asked: string[] = []
  let answer!: (addresses: string[]) => void
  const held = new Promise<string[]>((resolve) => { answer = resolve })
  let askedOnce!: () => void
  const firstAsk = new Promise<void>((resolve) => { askedOnce = resolve })
  const resolveHost = (host: string) => {
    asked.push(host)
    askedOnce()
    return held
  }
  return { asked, firstAsk, answer: (addresses: string[]) => answer(addresses), resolveHost }
}

/** Settles with 'still waiting' when PROMISE has not settled within MS: a hang bound, not a timing target. */
function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<'still waiting'>((resolve) => { timer = setTimeout(() => resolve('still waiting'), ms) })
  return Promise.race([promise, waited]).finally(() => clearTimeout(timer))
}

describe('POST /webhooks resolving the endpoint host', () => {
  it('lets the same key create a loan while the host lookup is still unanswered, then registers the endpoint', async () => {
    const resolver = createHeldResolver()
    api = await createTestApi({ resolveHost: resolver.resolveHost })
    const registering = api.post('/api/sandbox/webhooks', { url: 'https://slow-dns.partner.example/hooks' })
    try {
      await resolver.firstAsk
      const loan = await settledWithin(api.post('/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }), 5000)
      expect(loan).not.toBe('still waiting')
      expect((loan as { status: number }).status).toBe(200)
      expect(await settledWithin(registering, 50)).toBe('still waiting')
    } finally {
      // Answered whatever happened above, or the sandbox's close waits for the request forever.
      resolver.answer(['93.184.216.34'])
    }
    const registered = await registering
    expect(registered.status).toBe(200)
    expect(registered.body.endpoint.url).toBe('https://slow-dns.partner.example/hooks')
    // One lookup, made before the key's lock and its answer used under it.
    expect(resolver.asked).toEqual(['slow-dns.partner.example'])
  })

  it('still refuses a host that resolves to a private address, and one that does not resolve', async () => {
    let addresses: string[] | Error = ['10.1.2.3']
    api = await createTestApi({ resolveHost: async () => { if (addresses instanceof Error) throw addresses; return addresses } })
    const private_ = await api.post('/api/sandbox/webhooks', { url: 'https://inside.partner.example/hooks' })
    expect(private_.status).toBe(400)
    expect(private_.body.details).toMatchObject({ reason: 'private_address', address: '10.1.2.3' })

    addresses = Object.assign(new Error('no such host'), { code: 'ENOTFOUND' })
    const unresolvable = await api.post('/api/sandbox/webhooks', { url: 'https://gone.partner.example/hooks' })
    expect(unresolvable.status).toBe(400)
    expect(unresolvable.body.details).toMatchObject({ reason: 'unresolvable' })
    expect((await api.get('/api/sandbox/webhooks')).body.endpoint).toBeNull()
  })

  it('replays a registration by its Idempotency-Key even when the host no longer resolves, without an unhandled rejection', async () => {
    let resolvable = true
    api = await createTestApi({ resolveHost: async () => { if (!resolvable) throw Object.assign(new Error('gone'), { code: 'ENOTFOUND' }); return ['93.184.216.34'] } })
    const rejections: unknown[] = []
    const onRejection = (reason: unknown) => rejections.push(reason)
    process.on('unhandledRejection', onRejection)
    try {
      const first = await api.post('/api/sandbox/webhooks', { url: 'https://hooks.partner.example/x' }, { idempotencyKey: 'register-once' })
      expect(first.status).toBe(200)
      resolvable = false
      const again = await api.post('/api/sandbox/webhooks', { url: 'https://hooks.partner.example/x' }, { idempotencyKey: 'register-once' })
      expect(again.status).toBe(200)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(again.body.endpoint.id).toBe(first.body.endpoint.id)
      // The lookup's failure, unused by a replay, must not surface as an unhandled rejection.
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(rejections).toEqual([])
    } finally {
      process.off('unhandledRejection', onRejection)
    }
  })

  it('is waited for by the sandbox\'s close(), as it was under the lock: no write after close', async () => {
    const resolver = createHeldResolver()
    const sandboxApi = await createTestApi({ resolveHost: resolver.resolveHost })
    const registering = sandboxApi.post('/api/sandbox/webhooks', { url: 'https://slow-dns.partner.example/hooks' })
    await resolver.firstAsk
    let closed = false
    const closing = sandboxApi.sandbox.close().then(() => { closed = true })
    // close() resolved while the lookup was unanswered, and the request then wrote to the closed storage.
    await settledWithin(closing, 100)
    expect(closed).toBe(false)
    resolver.answer(['93.184.216.34'])
    await closing
    expect((await registering).status).toBe(200)
  })
})
