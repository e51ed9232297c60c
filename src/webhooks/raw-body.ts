import { isArrayBuffer } from 'node:util/types'
import { isBytes } from '../text/is-bytes.js'

/**
 * A webhook request's body as received, before any parsing: its text, or its bytes (a Buffer from
 * `express.raw()`, `await request.arrayBuffer()`). The signature covers these exact bytes.
 */
export type WebhookBody = string | Uint8Array | ArrayBuffer

// body-parser 1 (express 4) sets req.body to {} before it skips a request of another content type.
const EMPTY_OBJECT = 'an empty object: no body parser read this request (express 4 leaves {} then); express.raw() takes only application/octet-stream unless told, and deliveries are application/json: express.raw({ type: \'application/json\' }) on this route'

const UNREAD_STREAM = 'a stream not yet read: read it whole first (await request.text() for a fetch Request; for Node\'s request, its chunks joined with Buffer.concat, or raw-body\'s getRawBody(req))'

/**
 * What BODY is when it holds the body still to be read (a Promise, a Blob, a stream), or
 * undefined. Each was told as an object a JSON parser made, which none of them is.
 */
function describeUnreadBody(body: object): string | undefined {
  const shape = body as { then?: unknown; getReader?: unknown; pipe?: unknown }
  if (typeof shape.then === 'function') return 'a Promise: await it (const rawBody = await request.text())'
  const tag = Object.prototype.toString.call(body)
  if (tag === '[object Blob]' || tag === '[object File]') return 'a Blob: read it first (await blob.text(), or await request.text() in place of request.blob())'
  if (typeof shape.getReader === 'function' || typeof shape.pipe === 'function') return UNREAD_STREAM
  return undefined
}

function isEmptyPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype && Object.keys(value).length === 0
}

/**
 * BODY as text or bytes to sign, or a TypeError that says what to pass instead. A body a framework
 * already parsed (express.json()) cannot be checked: its bytes are gone, and signing its
 * `[object Object]` made every delivery a signature mismatch that pointed at the secret.
 */
export function readWebhookBody(body: unknown): string | Uint8Array {
  if (typeof body === 'string' || isBytes(body)) return body
  if (isArrayBuffer(body)) return new Uint8Array(body)
  const found = body === null || body === undefined
    ? `${body} (does the framework keep the raw body? With express, express.raw({ type: 'application/json' }) on this route)`
    : isEmptyPlainObject(body) ? EMPTY_OBJECT
      : typeof body === 'object' ? describeUnreadBody(body) ?? 'an object: a JSON parser such as express.json() ran first; take the raw body instead' : `a ${typeof body}`
  throw new TypeError(`the webhook body must be the raw request body, a string or a Buffer, before any JSON parsing; it is ${found}`)
}

/** The text of BODY (bytes decoded as UTF-8, as the sandbox sends them). */
export function readWebhookText(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : new TextDecoder().decode(body)
}
