import { request } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestApi, listenTestApi, newKey, type TestApi } from '../helpers/api.js'

// fetch joins a header set twice into one value before it is sent: only a raw client sends it
// twice, as a proxy or a client that adds its own on top of its library's does.
let api: TestApi | undefined
let listener: Awaited<ReturnType<typeof listenTestApi>> | undefined
afterEach(async () => {
  await listener?.close()
  await api?.sandbox.close()
  listener = undefined
  api = undefined
})

/** POSTs `body` with exactly these header lines (name, value, name, value, ...), repeats kept. */
function postRaw(url: string, path: string, lines: string[], body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const { host } = new URL(url)
  return new Promise((resolve, reject) => {
    const headers = ['Host', host, 'Content-Type', 'application/json', 'Content-Length', String(Buffer.byteLength(body)), ...lines]
    const req = request(`${url}${path}`, { method: 'POST', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function serve() {
  api = await createTestApi()
  listener = await listenTestApi(api.sandbox)
  return { url: listener.url, key: api.key }
}

const PROFILE = JSON.stringify({ name: 'Acme' })

describe('request headers sent twice on a real connection', () => {
  it('an Idempotency-Key sent twice is 400 INVALID_REQUEST saying so, and nothing is executed or stored under either key', async () => {
    const { url, key } = await serve()
    const answer = await postRaw(url, '/api/sandbox/partner', ['Authorization', `Bearer ${key}`, 'Idempotency-Key', 'first-key', 'Idempotency-Key', 'second-key'], PROFILE)
    expect(answer.status).toBe(400)
    expect(answer.body).toMatchObject({
      error_code: 'INVALID_REQUEST',
      error: 'The Idempotency-Key header came 2 times; send it once, with one key per operation.',
      details: { field: 'Idempotency-Key', issue: 'repeated' },
    })
    expect((await api!.get('/api/sandbox/partner')).body.profile.name).not.toBe('Acme')
    // Neither key, nor the two joined, was used up: each runs its own first execution.
    for (const idem of ['first-key', 'second-key', 'first-key, second-key']) {
      const once = await postRaw(url, '/api/sandbox/partner', ['Authorization', `Bearer ${key}`, 'Idempotency-Key', idem], PROFILE)
      expect([once.status, once.body.idempotency_replayed], idem).toEqual([200, false])
    }
  })

  it('the same key sent twice is refused too: which one is meant is not the server\'s guess', async () => {
    const { url, key } = await serve()
    const answer = await postRaw(url, '/api/sandbox/partner', ['Authorization', `Bearer ${key}`, 'idempotency-key', 'k-1', 'Idempotency-Key', 'k-1'], PROFILE)
    expect([answer.status, answer.body.error_code]).toEqual([400, 'INVALID_REQUEST'])
  })

  it('an Authorization sent twice is 401 SANDBOX_API_KEY_REQUIRED saying it came more than once', async () => {
    const { url } = await serve()
    const key = newKey()
    const answer = await postRaw(url, '/api/sandbox/partner', ['Authorization', `Bearer ${key}`, 'Authorization', `Bearer ${key}`, 'Idempotency-Key', 'auth-twice'], PROFILE)
    expect(answer.status).toBe(401)
    expect(answer.body).toMatchObject({ error_code: 'SANDBOX_API_KEY_REQUIRED', error: 'The Authorization header came more than once (or held several values); send it once, as "Authorization: Bearer sk_sandbox_...".' })
  })
})
