import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
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

/**
 * POSTs exactly `body` with `headers` to `url`. No redirects are followed; any answer is the
 * outcome. Never throws: network errors and timeouts become `error`.
 */
export function sendWebhook(url: string, body: string, headers: Record<string, string>, options: SendOptions = {}): Promise<AttemptOutcome> {
  const started = performance.now()
  const target = new URL(url)
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
  return new Promise((resolve) => {
    let settled = false
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return
      settled = true
      resolve({ statusCode, error, durationMs: Math.round((performance.now() - started) * 10) / 10 })
    }
    const req = request(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'partner-sandbox-webhooks/0.3.0' },
      lookup: options.isForbidden ? guardedLookup(options.isForbidden, options.resolve) : undefined,
      timeout: timeoutMs,
    }, (res) => {
      res.resume()
      res.on('end', () => finish(res.statusCode ?? null, null))
      res.on('error', () => finish(res.statusCode ?? null, null))
    })
    req.on('timeout', () => {
      req.destroy()
      finish(null, `timed out after ${timeoutMs} ms`)
    })
    req.on('error', (error: NodeJS.ErrnoException) => finish(null, error.code ? `${error.code}: ${error.message}` : error.message))
    req.end(body)
  })
}
