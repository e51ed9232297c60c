import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { request as httpRequest } from 'node:http'
import { connect as netConnect, isIP, type LookupFunction, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import type { AttemptOutcome } from './types.js'

/** Delivery timeout (decisions.md: 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000

/** Options of one send. */
export interface SendOptions {
  /** Rejects connections to addresses this returns true for (checked on the resolved address). */
  isForbidden?: (address: string) => boolean
  /** Resolves host names instead of the system DNS (tests inject one). */
  resolve?: (host: string) => Promise<string[]>
  timeoutMs?: number
  /**
   * Connections being opened, per destination: a send that finds one waits for it and, if it
   * fails, fails the same way without opening its own (see `sendWebhook`).
   */
  opening?: OpeningConnections
}

/** Connection attempts in progress: destination -> the failure it ended with, or null once up. */
export type OpeningConnections = Map<string, Promise<string | null>>

/**
 * A DNS lookup that refuses forbidden addresses: the address checked is the address connected
 * to, so a name that re-resolves to a private address after registration (DNS rebinding) is
 * refused at delivery time.
 */
function guardedLookup(isForbidden: (address: string) => boolean, resolve?: (host: string) => Promise<string[]>): LookupFunction {
  const lookupAll = (hostname: string, options: object, done: (error: Error | null, addresses: LookupAddress[]) => void) => {
    if (!resolve) return dnsLookup(hostname, { ...options, all: true }, done)
    resolve(hostname).then(
      (addresses) => done(null, addresses.map((address) => ({ address, family: isIP(address) }))),
      (error: Error) => done(error, []),
    )
  }
  return ((hostname: string, options: object, callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    lookupAll(hostname, options, (error, addresses) => {
      if (error) return callback(error, [])
      const bad = addresses.find((entry) => isForbidden(entry.address))
      if (bad) return callback(Object.assign(new Error(`${hostname} resolves to a forbidden address ${bad.address}`), { code: 'EFORBIDDEN' }), [])
      if ((options as { all?: boolean }).all) return callback(null, addresses)
      return callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }) as LookupFunction
}

/** The headers of one send, or a function that builds them once the connection is open. */
export type SendHeaders = Record<string, string> | (() => Record<string, string>)

function openSocket(target: URL, lookup: LookupFunction | undefined): Socket {
  const host = target.hostname.replace(/^\[|\]$/g, '')
  if (target.protocol !== 'https:') return netConnect({ host, port: Number(target.port) || 80, lookup })
  return tlsConnect({ host, port: Number(target.port) || 443, servername: isIP(host) ? undefined : host, lookup, ALPNProtocols: ['http/1.1'] })
}

/**
 * POSTs exactly `body` with `headers` to `url`. No redirects are followed; any answer is the
 * outcome. Never throws: network errors and timeouts (of the whole attempt) become `error`.
 *
 * The connection is opened first and the HTTP request built on it only once it is up: a dead
 * receiver then costs a refused socket, not a whole client request, and headers given as a
 * function (a signature with its timestamp) are made at the moment of sending. With `opening`,
 * sends that start while a connection to the same destination is being opened share its
 * failure: a dead receiver costs one refused connection per moment, not one per waiting key.
 */
export function sendWebhook(url: string, body: string, headers: SendHeaders, options: SendOptions = {}): Promise<AttemptOutcome> {
  const started = performance.now()
  const target = new URL(url)
  const destination = `${options.isForbidden ? 'checked ' : ''}${target.protocol}//${target.host}`
  const pending = options.opening?.get(destination)
  if (!pending) return send(target, body, headers, options, started, destination)
  return pending.then((failure) => failure === null
    ? send(target, body, headers, options, started, destination)
    : { statusCode: null, error: failure, durationMs: elapsedSince(started) })
}

function elapsedSince(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10
}

function send(target: URL, body: string, headers: SendHeaders, options: SendOptions, started: number, destination: string): Promise<AttemptOutcome> {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
  let opened: (failure: string | null) => void = () => {}
  const { opening } = options
  if (opening && !opening.has(destination)) {
    const connecting = new Promise<string | null>((resolve) => (opened = resolve))
    opening.set(destination, connecting)
    void connecting.then(() => {
      if (opening.get(destination) === connecting) opening.delete(destination)
    })
  }
  return new Promise((resolve) => {
    let settled = false
    const socket = openSocket(target, options.isForbidden ? guardedLookup(options.isForbidden, options.resolve) : undefined)
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      // A no-op once the connection is up: only a failure to connect is shared.
      opened(error)
      resolve({ statusCode, error, durationMs: elapsedSince(started) })
    }
    const fail = (error: NodeJS.ErrnoException) => finish(null, error.code ? `${error.code}: ${error.message}` : error.message)
    const timer = setTimeout(() => finish(null, `timed out after ${timeoutMs} ms`), timeoutMs)
    socket.once('error', fail)
    socket.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      opened(null)
      const fixed = typeof headers === 'function' ? headers() : headers
      const req = httpRequest({
        method: 'POST',
        path: `${target.pathname}${target.search}`,
        headers: { ...fixed, host: target.host, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'partner-sandbox-webhooks/0.3.0' },
        createConnection: () => socket,
      }, (res) => {
        res.resume()
        res.on('end', () => finish(res.statusCode ?? null, null))
        res.on('error', () => finish(res.statusCode ?? null, null))
      })
      req.on('error', fail)
      req.end(body)
    })
  })
}
