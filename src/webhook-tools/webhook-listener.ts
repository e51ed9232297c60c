import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifyWebhook } from '../webhooks/signature.js'
import { createConnectionPool } from '../webhooks/connection-pool.js'
import { sendWebhook } from '../webhooks/sender.js'
import { toListenError } from '../server/listen-errors.js'
import { applyServerTimeouts, resolveServerTimeouts, type ServerTimeoutOverrides } from '../server/server-timeouts.js'
import { limitIdleToClients } from '../server/idle-cut.js'

/**
 * Largest delivery body the listener takes (413 above it). The sandbox's events are a few KB; a
 * bound keeps a stray client on a `--host 0.0.0.0` listener from filling its memory.
 */
export const LISTENER_BODY_LIMIT_BYTES = 10 * 1024 * 1024

/** One delivery the listener received. */
export interface ReceivedWebhook {
  at: string
  method: string
  path: string
  event_id: string | null
  event_type: string | null
  headers: IncomingMessage['headers']
  /** `valid`, `invalid: <why>`, or `unchecked` without a secret. */
  signature: string
  body: string
  /** What the listener answered. */
  status: number
  /** `--forward-to`'s outcome: the target's status or why it had none, and the start of its answer (null without one). */
  forwarded?: { status: number | null; error: string | null; answer: string | null }
}

/** Options of startWebhookListener. */
export interface WebhookListenerOptions {
  port: number
  host?: string | undefined
  /** The signing secret to check deliveries with; several while a rotation reaches you. */
  secret?: string | readonly string[] | undefined
  /** Answer every delivery with this status instead of 200 (to exercise retries). */
  respondStatus?: number | undefined
  /** Pass each delivery on, same body bytes and webhook headers. */
  forwardTo?: string | undefined
  onDelivery?: ((delivery: ReceivedWebhook) => void) | undefined
  /** Limits on slow or stalled clients, as `listenSandbox` takes them; unset ones keep serve's defaults. */
  timeouts?: ServerTimeoutOverrides | undefined
}

/** How much of a forward target's answer a delivery keeps: enough for a framework's error message. */
const FORWARD_ANSWER_BYTES = 1024
const FORWARDED_HEADERS = ['x-service-webhook-id', 'x-service-webhook-event', 'x-service-webhook-timestamp', 'x-service-webhook-signature']

/** The body, or null once it passes LISTENER_BODY_LIMIT_BYTES (the rest is not kept). */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size <= LISTENER_BODY_LIMIT_BYTES) chunks.push(chunk)
    })
    req.on('end', () => resolve(size > LISTENER_BODY_LIMIT_BYTES ? null : Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

function checkSignature(secret: string | readonly string[] | undefined, body: Buffer, headers: IncomingMessage['headers']): string {
  if (!secret || secret.length === 0) return 'unchecked'
  try {
    verifyWebhook({ secret, body, headers })
    return 'valid'
  } catch (error) {
    return `invalid: ${(error as Error).message}`
  }
}

/**
 * A local webhook receiver for development: checks each delivery's signature, reports it, answers
 * 200 (or `respondStatus`, or the forward target's status) and optionally passes it on unchanged.
 */
export async function startWebhookListener(options: WebhookListenerOptions): Promise<{ url: string; close(): Promise<void> }> {
  const timeouts = resolveServerTimeouts(options.timeouts)
  // Forwards reuse kept-alive connections: a new one per delivery cost the listener and the
  // receiver behind it more CPU than the delivery itself.
  const pool = options.forwardTo ? createConnectionPool({ inFlightPerDestination: Infinity }) : undefined
  const server = createServer(async (req, res) => {
    // A client that hung up, or was cut with a 408, before its body was whole sent no delivery:
    // read as an empty body, it was reported (and forwarded) as one with a bad signature.
    const raw = await readBody(req).catch(() => undefined)
    if (raw === undefined) return
    if (raw === null) {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ received: false, error: `body over ${LISTENER_BODY_LIMIT_BYTES} bytes` }))
      return
    }
    const body = raw.toString('utf8')
    const header = (name: string) => {
      const value = req.headers[name]
      return (Array.isArray(value) ? value[0] : value) ?? null
    }
    let forwarded: ReceivedWebhook['forwarded']
    if (options.forwardTo) {
      const headers = Object.fromEntries(FORWARDED_HEADERS.filter((name) => header(name) !== null).map((name) => [name, header(name)!]))
      // The bytes as received: decoded and encoded again, bytes that are not UTF-8 would change.
      // The start of the target's answer: a framework that logs nothing (Fastify by default) puts its error there.
      const outcome = await sendWebhook(options.forwardTo, raw, headers, { pool, keepAnswerBytes: FORWARD_ANSWER_BYTES })
      forwarded = { status: outcome.statusCode, error: outcome.error, answer: outcome.answer ?? null }
    }
    const status = options.respondStatus ?? (forwarded ? (forwarded.status ?? 502) : 200)
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ received: status < 300 }))
    options.onDelivery?.({
      at: new Date().toISOString(),
      method: req.method ?? 'POST',
      path: req.url ?? '/',
      event_id: header('x-service-webhook-id'),
      event_type: header('x-service-webhook-event'),
      headers: req.headers,
      signature: checkSignature(options.secret, raw, req.headers),
      body,
      status,
      ...(forwarded ? { forwarded } : {}),
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(toListenError(error, options.port, options.host ?? '127.0.0.1')))
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.removeAllListeners('error')
      resolve()
    })
  })
  // The same limits as serve's, set the same way: Node's own let a trickling client hold a socket for minutes.
  applyServerTimeouts(server, timeouts)
  limitIdleToClients(server, timeouts)
  const { port } = server.address() as AddressInfo
  const host = options.host ?? '127.0.0.1'
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => new Promise((resolve) => {
      pool?.close()
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
