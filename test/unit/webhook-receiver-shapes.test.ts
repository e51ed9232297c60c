import { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { constructWebhookEvent } from '../../src/webhooks/construct-event.js'
import { signWebhook, verifyWebhook } from '../../src/webhooks/signature.js'

// What a receiver written in a framework hands over by mistake, in the shapes those frameworks
// make (a fetch Request, Node's IncomingMessage, Fastify's and Hono's request wrappers), built
// here without the frameworks. Each was told as something else: a JSON parser that never ran, or
// a header missing from a delivery that carried all four.
const secret = 'whsec_receiver_shapes_secret'
const body = JSON.stringify({ id: 'evt_1', type: 'sandbox.webhook.test', created_at: '2026-11-27T00:00:00.000Z', api_version: '0.3.0', data: { object: {} } })
const { headers } = signWebhook({ secret, body, eventId: 'evt_1', eventType: 'sandbox.webhook.test' })
const url = 'http://127.0.0.1:3000/webhooks'

function messageOf(run: () => unknown): string {
  try {
    run()
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`
  }
  return 'no error'
}

const both = [
  ['verifyWebhook', (input: { body: unknown; headers: unknown }) => verifyWebhook({ secret, ...input } as Parameters<typeof verifyWebhook>[0])],
  ['constructWebhookEvent', (input: { body: unknown; headers: unknown }) => constructWebhookEvent({ secret, ...input } as Parameters<typeof constructWebhookEvent>[0])],
] as const

/** Node's request as node:http hands it over (Koa's ctx.req, Express's and Fastify's request.raw). */
function nodeRequest(): IncomingMessage {
  const request = new IncomingMessage(new Socket())
  request.headers = { ...headers, 'content-type': 'application/json' }
  return request
}

describe('a receiver\'s body of the wrong kind', () => {
  it.each(both)('%s: a body not awaited (request.text() without await) says to await it', (_name, verify) => {
    const pending = new Request(url, { method: 'POST', body }).text()
    expect(messageOf(() => verify({ body: pending, headers }))).toBe('TypeError: the webhook body must be the raw request body, a string or a Buffer, before any JSON parsing; it is a Promise: await it (const rawBody = await request.text())')
  })

  it.each(both)('%s: a Blob (await request.blob()) says to read it as text or bytes', (_name, verify) => {
    expect(messageOf(() => verify({ body: new Blob([body]), headers }))).toBe('TypeError: the webhook body must be the raw request body, a string or a Buffer, before any JSON parsing; it is a Blob: read it first (await blob.text(), or await request.text() in place of request.blob())')
  })

  it.each(both)('%s: the unread body stream (a fetch request.body, Node\'s request) says to read it first', (_name, verify) => {
    const stream = 'TypeError: the webhook body must be the raw request body, a string or a Buffer, before any JSON parsing; it is a stream not yet read: read it whole first (await request.text() for a fetch Request; for Node\'s request, its chunks joined with Buffer.concat, or raw-body\'s getRawBody(req))'
    expect(messageOf(() => verify({ body: new Request(url, { method: 'POST', body }).body, headers }))).toBe(stream)
    expect(messageOf(() => verify({ body: nodeRequest(), headers }))).toBe(stream)
    expect(messageOf(() => verify({ body: new PassThrough(), headers }))).toBe(stream)
  })

  it.each(both)('%s: a parsed object is still told as a JSON parser\'s work', (_name, verify) => {
    expect(messageOf(() => verify({ body: JSON.parse(body), headers }))).toMatch(/it is an object: a JSON parser such as express\.json\(\) ran first; take the raw body instead$/)
  })
})

describe('a receiver\'s request passed for its headers', () => {
  const told = (name: string, hint: string) => `TypeError: ${name} needs the request's headers, not the request: ${hint}`

  it.each(both)('%s: a fetch Request (a Next.js route handler\'s request) says to pass request.headers', (name, verify) => {
    const request = new Request(url, { method: 'POST', body, headers })
    expect(messageOf(() => verify({ body, headers: request }))).toBe(told(name, 'pass request.headers'))
  })

  it.each(both)('%s: Node\'s IncomingMessage (Koa\'s ctx.req) says to pass request.headers', (name, verify) => {
    expect(messageOf(() => verify({ body, headers: nodeRequest() }))).toBe(told(name, 'pass request.headers'))
  })

  it.each(both)('%s: Fastify\'s request (headers and raw) says to pass request.headers', (name, verify) => {
    const raw = nodeRequest()
    const fastifyRequest = Object.create({ get headers() { return raw.headers } }, { raw: { value: raw, enumerable: true }, id: { value: 'req-1', enumerable: true } }) as object
    expect(messageOf(() => verify({ body, headers: fastifyRequest }))).toBe(told(name, 'pass request.headers'))
  })

  it.each(both)('%s: Hono\'s c.req (its fetch Request as raw) says to pass c.req.raw.headers', (name, verify) => {
    class HonoRequestShape {
      raw = new Request(url, { method: 'POST', body, headers })
      path = '/webhooks'
      header(name?: string) { return name === undefined ? Object.fromEntries(this.raw.headers) : this.raw.headers.get(name) ?? undefined }
    }
    expect(messageOf(() => verify({ body, headers: new HonoRequestShape() }))).toBe(told(name, 'pass c.req.raw.headers, or c.req.header() (all of them as a record)'))
  })

  it.each(both)('%s: the headers themselves, in any of those shapes, still verify', (name, verify) => {
    const request = new Request(url, { method: 'POST', body, headers })
    for (const shape of [request.headers, Object.fromEntries(request.headers), nodeRequest().headers]) {
      expect(messageOf(() => verify({ body, headers: shape })), name).toBe('no error')
    }
    // A forged delivery with no webhook headers, but a header named like a request's field, is a missing header still.
    expect(messageOf(() => verify({ body, headers: { headers: 'x', raw: 'y', 'content-type': 'application/json' } }))).toBe('WebhookVerificationError: header x-service-webhook-id is missing')
  })
})
