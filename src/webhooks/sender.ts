import { request as httpRequest, type ClientRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { hasIdleConnection, type ConnectionPool, type PreopenedRequestArgs } from './connection-pool.js'
import { connectionArgsOf, destinationOf, lookupFor, openSocket, refuseLiteral, type Destination, type SendOptions } from './send-destination.js'
import type { AttemptOutcome } from './types.js'

/** Delivery timeout (decisions.md: 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000

/**
 * The most of a receiver's answer body read: the status decides the outcome and the body is never
 * shown, so past this the connection is closed instead of draining a large answer for up to 10 s.
 */
export const MAX_ANSWER_BYTES = 64 * 1024

/**
 * The most of a receiver's answer headers read (Node's client default is 16 KB): a framework's
 * session cookies or a long Content-Security-Policy take a 2xx past that, and it was recorded as
 * a failure and sent again. Past this bound the attempt fails, saying so.
 */
export const MAX_ANSWER_HEADER_BYTES = 1024 * 1024

export type { SendOptions } from './send-destination.js'

/**
 * The headers of one send, or a function that builds them once the connection is open; it
 * returns undefined to withdraw a send that no longer applies (its outcome then has `notSent`).
 */
export type SendHeaders = Record<string, string> | (() => Record<string, string> | undefined)

function elapsedSince(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10
}

/** Lets sends and probes that start meanwhile wait for `connecting` instead of opening their own. */
function shareOpening(pool: ConnectionPool, key: string, connecting: Promise<string | null>): void {
  pool.opening.set(key, connecting)
  void connecting.then(() => {
    if (pool.opening.get(key) === connecting) pool.opening.delete(key)
  })
}

/**
 * A network error as an attempt's `error`, on one line: the delivery log shows it as `last_error`,
 * and OpenSSL's messages carry its internal trace over several lines.
 */
function describeError(error: NodeJS.ErrnoException): string {
  // An https:// URL answered in plain HTTP: OpenSSL reads `HTTP/1.1 ...` as a record of an unknown TLS version.
  if (error.code === 'ERR_SSL_WRONG_VERSION_NUMBER' || (error.code === 'EPROTO' && /wrong version number/.test(error.message))) {
    return 'ERR_SSL_WRONG_VERSION_NUMBER: the receiver answers plain HTTP, not TLS'
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'HPE_HEADER_OVERFLOW: the receiver\'s answer headers are over 1 MiB, the most the sandbox reads'
  const message = error.message.split('\n')[0]!.trim()
  return error.code ? `${error.code}: ${message}` : message
}

/**
 * Opens a connection to the destination of `url` and closes it again: null once it is up (or
 * when a kept-alive one is there), otherwise why it failed, worded as a send's failure. It shares
 * the outcome with sends and probes that open a connection to the same destination meanwhile.
 * A dead receiver is then found out without building the request, or anything it needs.
 */
export function probeConnection(url: string, options: SendOptions = {}): Promise<string | null> {
  const to = destinationOf(new URL(url), options)
  const refusal = refuseLiteral(to, options)
  if (refusal) return Promise.resolve(refusal)
  if (to.agent && hasIdleConnection(to.agent, connectionArgsOf(to))) return Promise.resolve(null)
  const { pool } = options
  const pending = pool?.opening.get(to.key)
  if (pending) return pending
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const probing = new Promise<string | null>((resolve) => {
    const socket = openSocket(to, lookupFor(options))
    const done = (failure: string | null) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(failure)
    }
    const timer = setTimeout(() => done(`timed out after ${timeoutMs} ms`), timeoutMs)
    socket.once('error', (error: NodeJS.ErrnoException) => done(describeError(error)))
    socket.once(to.https ? 'secureConnect' : 'connect', () => done(null))
  })
  if (pool) shareOpening(pool, to.key, probing)
  return probing
}

/** A connection reset before any answer: the receiver closed the kept-alive connection as we sent. */
function isStaleConnection(error: NodeJS.ErrnoException): boolean {
  return error.code === 'ECONNRESET' || error.code === 'EPIPE'
}

/**
 * POSTs exactly `body` (text as its UTF-8 bytes) with `headers` to `url`. No redirects are followed; any answer is the
 * outcome. Never throws: network errors and timeouts (of the whole attempt) become `error`.
 *
 * A new connection is opened first and the HTTP request built on it only once it is up: a dead
 * receiver then costs a refused socket, not a whole client request, and headers given as a
 * function (a signature with its timestamp) are made at the moment of sending. With a `pool`,
 * connections are kept alive and reused per destination (a send that finds the kept one closed
 * by the receiver retries once on a new one), and sends that start while a connection to the
 * same destination is being opened share its failure: a dead receiver costs one refused
 * connection per moment, not one per waiting key. A pool also lets no more than
 * MAX_IN_FLIGHT_PER_DESTINATION sends in flight per destination; the others wait their turn, first
 * come, first served, and their timeout starts with it. Once the pool's gates are closed, a
 * waiting send is not made: its outcome has `notSent`.
 */
export function sendWebhook(url: string, body: string | Uint8Array, headers: SendHeaders, options: SendOptions = {}): Promise<AttemptOutcome> {
  const to = destinationOf(new URL(url), options)
  const refusal = refuseLiteral(to, options)
  if (refusal) return Promise.resolve({ statusCode: null, error: refusal, durationMs: 0, refused: true })
  const gates = options.pool?.gates
  if (!gates) return startSend(to, body, headers, options)
  const leave = () => gates.leave(to.key)
  if (gates.tryEnter(to.key)) return startSend(to, body, headers, options).finally(leave)
  // Waiting for a place is not part of the attempt: its 10 s start once it has one. A pool closed
  // meanwhile (the server stopping) sends nothing: the stop waits for sends in flight, not queued.
  return gates.enter(to.key).then((entered) => (entered ? startSend(to, body, headers, options).finally(leave) : NOT_SENT))
}

/** The outcome of a send the pool stopped before it had a place in flight. */
const NOT_SENT: AttemptOutcome = { statusCode: null, error: 'not sent: the server is stopping', durationMs: 0, notSent: true }

/** The outcome of a send its headers function withdrew. */
const WITHDRAWN: AttemptOutcome = { statusCode: null, error: 'not sent: its target changed meanwhile', durationMs: 0, notSent: true }

/** A send that has its place: on a kept-alive connection, on the one being opened, or on a new one. */
function startSend(to: Destination, body: string | Uint8Array, headers: SendHeaders, options: SendOptions): Promise<AttemptOutcome> {
  const started = performance.now()
  if (to.agent && hasIdleConnection(to.agent, connectionArgsOf(to))) return send(to, body, headers, options, started, true)
  const pending = options.pool?.opening.get(to.key)
  if (!pending) return send(to, body, headers, options, started, false)
  return pending.then((failure) => failure === null
    ? send(to, body, headers, options, started, false)
    : { statusCode: null, error: failure, durationMs: elapsedSince(started), refused: true })
}

/** One send, on a kept-alive connection (`reuse`) or on a new one. */
function send(to: Destination, body: string | Uint8Array, headers: SendHeaders, options: SendOptions, started: number, reuse: boolean): Promise<AttemptOutcome> {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const { pool } = options
  const { agent } = to
  let opened: (failure: string | null) => void = () => {}
  if (pool && !reuse && !pool.opening.has(to.key)) shareOpening(pool, to.key, new Promise<string | null>((resolve) => (opened = resolve)))
  return new Promise((resolve) => {
    let settled = false
    let req: ClientRequest | undefined
    let connected = reuse
    const socket = reuse ? undefined : openSocket(to, lookupFor(options))
    /** Set once the answer's status line is in: a 2xx there is the receiver's acknowledgement. */
    let answeredStatus: number | null = null
    /** An answer cut off unread (too large, or not finished in time): its connection cannot be reused. */
    let unread = false
    const keep = options.keepAnswerBytes ?? 0
    let kept: Buffer[] | undefined
    let keptBytes = 0
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      // A delivered answer leaves a pooled connection to the agent, to be reused; one whose answer
      // was cut off unread cannot carry another request.
      if (error !== null || !agent || unread) {
        req?.destroy()
        socket?.destroy()
      }
      // A no-op once the connection is up: only a failure to connect is shared.
      opened(error)
      resolve({ statusCode, error, durationMs: elapsedSince(started), ...(connected ? {} : { refused: true }), ...(keep > 0 && statusCode !== null ? { answer: kept ? Buffer.concat(kept).toString('utf8') : '' } : {}) })
    }
    const fail = (error: NodeJS.ErrnoException) => finish(null, describeError(error))
    // Counted from the start of the attempt: waiting for a shared connection and a resend on a new
    // one use up the same 10 s.
    const timer = setTimeout(() => {
      // An answer whose status came in time but whose body did not: the status decides, as for a
      // body cut off, or a 2xx the receiver acted on would be sent again.
      if (answeredStatus === null) return finish(null, `timed out after ${timeoutMs} ms`)
      unread = true
      finish(answeredStatus, null)
    }, Math.max(0, started + timeoutMs - performance.now()))
    const post = () => {
      connected = true
      opened(null)
      const fixed = typeof headers === 'function' ? headers() : headers
      if (fixed === undefined) {
        // Nothing was written: a kept connection stays with the agent, a new one is closed.
        settled = true
        clearTimeout(timer)
        socket?.destroy()
        return resolve(WITHDRAWN)
      }
      const args: PreopenedRequestArgs = {
        ...connectionArgsOf(to),
        method: 'POST',
        path: `${to.target.pathname}${to.target.search}`,
        headers: { ...fixed, host: to.target.host, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'partner-sandbox-webhooks/0.3.0' },
        maxHeaderSize: MAX_ANSWER_HEADER_BYTES,
        // No agent at all without a pool: given `agent: false`, Node makes a fresh Agent, which
        // ignores createConnection and opens a second connection, leaving ours unused.
        ...(agent ? { agent, preopened: socket } : { createConnection: () => socket }),
      }
      let answered = false
      req = (to.https ? httpsRequest : httpRequest)(args, (res) => {
        answered = true
        answeredStatus = res.statusCode ?? null
        let size = 0
        res.on('data', (chunk: Buffer) => {
          if (keptBytes < keep) {
            kept ??= []
            kept.push(chunk.subarray(0, keep - keptBytes))
            keptBytes += Math.min(chunk.length, keep - keptBytes)
          }
          size += chunk.length
          if (size <= MAX_ANSWER_BYTES) return
          unread = true
          finish(res.statusCode ?? null, null)
        })
        res.on('end', () => finish(res.statusCode ?? null, null))
        res.on('error', () => finish(res.statusCode ?? null, null))
      })
      // The agent may have given the request a connection freed meanwhile: ours is not needed.
      if (socket) req.once('socket', (used) => used !== socket && socket.destroy())
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (!reuse || answered || settled || !isStaleConnection(error)) return fail(error)
        settled = true
        clearTimeout(timer)
        resolve(send(to, body, headers, options, started, false))
      })
      req.end(body)
    }
    if (!socket) return post()
    socket.once('error', fail)
    socket.once(to.https ? 'secureConnect' : 'connect', post)
  })
}
