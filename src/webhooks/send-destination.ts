import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import type { Agent as HttpAgent, ClientRequestArgs } from 'node:http'
import { connect as netConnect, isIP, type LookupFunction, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import type { ConnectionPool } from './connection-pool.js'

/** Options of one send. */
export interface SendOptions {
  /**
   * Rejects connections to addresses this returns true for: an address written in the URL before
   * connecting, a host name's addresses once resolved.
   */
  isForbidden?: (address: string) => boolean
  /** Resolves host names instead of the system DNS (tests inject one). */
  resolve?: (host: string) => Promise<string[]>
  timeoutMs?: number
  /** Keep the first this many bytes of the answer's body as the outcome's `answer` (webhook verify shows them). */
  keepAnswerBytes?: number
  /**
   * Connections to keep alive and reuse, and to share failures of (see `sendWebhook`). Without
   * it every send opens and closes its own connection.
   */
  pool?: ConnectionPool
}

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

/** Where one send goes, resolved once from its URL. */
export interface Destination {
  target: URL
  /** The host name or address, without IPv6 brackets. */
  host: string
  port: number
  https: boolean
  /** Sends share connection failures per key: scheme, host, port, and whether addresses are checked. */
  key: string
  agent?: HttpAgent
}

/** Where sends to `target` go, with the agent of `options.pool` that keeps their connections. */
export function destinationOf(target: URL, options: SendOptions): Destination {
  const https = target.protocol === 'https:'
  return {
    target,
    host: target.hostname.replace(/^\[|\]$/g, ''),
    port: Number(target.port) || (https ? 443 : 80),
    https,
    key: `${options.isForbidden ? 'checked ' : ''}${target.protocol}//${target.host}`,
    agent: options.pool && (https ? options.pool.https : options.pool.http),
  }
}

/** The destination `url` is sent to, as sends share connections, failures and places in flight. */
export function destinationKeyOf(url: string, options: SendOptions): string {
  return destinationOf(new URL(url), options).key
}

/** The options that name a connection (what a keep-alive agent pools connections by). */
export function connectionArgsOf(to: Destination): ClientRequestArgs {
  return { host: to.host, port: to.port, ...(to.https && !isIP(to.host) ? { servername: to.host } : {}) }
}

/**
 * Without Nagle's algorithm: headers and body go out as separate writes, and the second would
 * otherwise wait for the receiver's delayed ACK (about 40 ms on Linux loopback).
 */
export function openSocket(to: Destination, lookup: LookupFunction | undefined): Socket {
  if (!to.https) return netConnect({ host: to.host, port: to.port, lookup, noDelay: true })
  const socket = tlsConnect({ host: to.host, port: to.port, servername: isIP(to.host) ? undefined : to.host, lookup, ALPNProtocols: ['http/1.1'] })
  socket.setNoDelay(true)
  return socket
}

/** The DNS lookup of a connection: guarded when addresses are checked. */
export function lookupFor(options: SendOptions): LookupFunction | undefined {
  return options.isForbidden ? guardedLookup(options.isForbidden, options.resolve) : undefined
}

/** Why a destination written as a forbidden address is refused without connecting, or null. */
export function refuseLiteral(to: Destination, options: SendOptions): string | null {
  return options.isForbidden && isIP(to.host) && options.isForbidden(to.host) ? `refused: ${to.host} is a local or private address` : null
}
