import { afterEach, describe, expect, it } from 'vitest'
import { MAX_BODY_BYTES } from '../../src/server/body.js'
import { createTestApi, listenTestApi, type TestApi } from '../helpers/api.js'

let api: TestApi | undefined
afterEach(async () => api?.sandbox.close())

/** A JSON object of exactly `bytes` bytes. */
function bodyOf(bytes: number): string {
  return JSON.stringify({ pad: 'x'.repeat(bytes - '{"pad":""}'.length) })
}

// DELETE /api/sandbox/webhooks without an endpoint answers 409 once its body is read and parsed.
describe('request bodies', () => {
  it('takes a body of exactly the 1 MiB limit, and refuses one byte more with 413', async () => {
    api = await createTestApi()
    const atLimit = await api.call('DELETE', '/api/sandbox/webhooks', { rawBody: bodyOf(MAX_BODY_BYTES) })
    expect([atLimit.status, atLimit.body.error_code]).toEqual([409, 'WEBHOOK_ENDPOINT_REQUIRED'])
    const over = await api.call('DELETE', '/api/sandbox/webhooks', { rawBody: bodyOf(MAX_BODY_BYTES + 1) })
    expect([over.status, over.body.error_code]).toEqual([413, 'PAYLOAD_TOO_LARGE'])
  })

  it('holds the same limit on a real port, where the length is declared and the body streamed', async () => {
    api = await createTestApi()
    const listener = await listenTestApi(api.sandbox)
    try {
      const send = (body: string) => fetch(`${listener.url}/api/sandbox/webhooks`, { method: 'DELETE', headers: { authorization: `Bearer ${api!.key}`, 'content-type': 'application/json' }, body })
      const atLimit = await send(bodyOf(MAX_BODY_BYTES))
      expect([atLimit.status, (await atLimit.json()).error_code]).toEqual([409, 'WEBHOOK_ENDPOINT_REQUIRED'])
      const over = await send(bodyOf(MAX_BODY_BYTES + 1))
      expect([over.status, (await over.json()).error_code]).toEqual([413, 'PAYLOAD_TOO_LARGE'])
    } finally {
      await listener.close()
    }
  })

  it('refuses bytes that are not UTF-8 with 400 INVALID_JSON instead of reading them as replacement characters', async () => {
    api = await createTestApi()
    const bytes = Buffer.concat([Buffer.from('{"name":"Caf'), Buffer.from([0xe9]), Buffer.from('"}')])
    const response = await api.sandbox.fetch(new Request('http://sandbox.test/api/sandbox/webhooks', { method: 'DELETE', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' }, body: bytes }))
    expect(response.status).toBe(400)
    expect((await response.json()).error_code).toBe('INVALID_JSON')
  })

  it('does not count brackets inside a string after an escaped quote towards the 64-level nesting limit', async () => {
    api = await createTestApi()
    const answer = await api.call('DELETE', '/api/sandbox/webhooks', { rawBody: JSON.stringify({ note: `"${'['.repeat(70)}` }) })
    expect([answer.status, answer.body.error_code]).toEqual([409, 'WEBHOOK_ENDPOINT_REQUIRED'])
  })
})
