import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'
import { SandboxError } from '../errors/sandbox-error.js'

const MAX_URL_LENGTH = 2048
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3')
const LOCAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/i

/** Why a webhook URL was refused (`details.reason` of WEBHOOK_URL_INVALID). */
export type UrlRefusal = 'not_a_url' | 'not_https' | 'credentials' | 'port_zero' | 'local_name' | 'private_address' | 'unresolvable' | 'too_long'

function refuse(reason: UrlRefusal, message: string, extra: Record<string, unknown> = {}): SandboxError {
  return new SandboxError('WEBHOOK_URL_INVALID', message, { reason, ...extra })
}

/**
 * Whether an address must never receive a delivery: everything that is not plain public unicast
 * (loopback, private, link-local, CGNAT, multicast, unspecified, broadcast, reserved,
 * documentation, unique-local, IPv6 outside 2000::/3...), with IPv4 embedded in IPv6 (mapped, NAT64,
 * 6to4) judged by its IPv4 part. Teredo (2001::/32) is refused whatever it embeds: a tunnel to
 * an address the URL does not show is no partner's webhook endpoint.
 */
export function isForbiddenAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''))
  } catch {
    return true
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) return isForbiddenAddress(v6.toIPv4Address().toString())
    const range = v6.range()
    if (range === 'rfc6052' || range === 'rfc6145') {
      // NAT64 / IPv4-translated: the last 32 bits are an IPv4 address.
      const parts = v6.parts
      return isForbiddenAddress(`${parts[6]! >> 8}.${parts[6]! & 255}.${parts[7]! >> 8}.${parts[7]! & 255}`)
    }
    if (range === '6to4') {
      const parts = v6.parts
      return isForbiddenAddress(`${parts[1]! >> 8}.${parts[1]! & 255}.${parts[2]! >> 8}.${parts[2]! & 255}`)
    }
    // ipaddr.js calls every unnamed range unicast, the deprecated IPv4-compatible ::/96
    // (::127.0.0.1) included; only 2000::/3 is assigned as global unicast.
    return range !== 'unicast' || !v6.match(GLOBAL_UNICAST_V6)
  }
  return parsed.range() !== 'unicast'
}

/** The addresses the system's resolver gives for HOST (getaddrinfo, as connections use). */
export async function resolveHostWithSystem(host: string): Promise<string[]> {
  const entries = await lookup(host, { all: true, verbatim: true })
  return entries.map((entry) => entry.address)
}

/**
 * A refusal that a receiver on the developer's machine meets: the partner reading the 400 is
 * usually one flag away from what they meant, so the message says which.
 */
function refuseLocal(reason: UrlRefusal, message: string, extra: Record<string, unknown> = {}): SandboxError {
  return refuse(reason, `${message} To deliver to a receiver on this machine, start the server with \`sandbox serve --allow-local-webhooks\`.`, extra)
}

/**
 * Checks a webhook URL against the spec's rule (decisions.md "URL rule"): https only, no
 * credentials, and no local or private target, whether written as a name, an address in any
 * notation, or a name that resolves to one. Throws SandboxError WEBHOOK_URL_REQUIRED /
 * WEBHOOK_URL_INVALID. `allowLocal` (serve --allow-local-webhooks) accepts http and local
 * targets for development.
 */
export async function checkWebhookUrl(raw: unknown, options: { allowLocal: boolean; resolve?: (host: string) => Promise<string[]> }): Promise<URL> {
  const { url, host } = readWebhookUrl(raw, options)
  if (host === undefined) return url
  let addresses: string[]
  try {
    addresses = await (options.resolve ?? resolveHostWithSystem)(host)
  } catch {
    throw refuse('unresolvable', `${host} does not resolve.`)
  }
  if (addresses.length === 0) throw refuse('unresolvable', `${host} does not resolve.`)
  const forbidden = addresses.find(isForbiddenAddress)
  if (forbidden) throw refuseLocal('private_address', `${host} resolves to ${forbidden}, a local, private or reserved address.`, { address: forbidden })
  return url
}

/**
 * The host name checkWebhookUrl would resolve for `raw`, or undefined when it would answer without
 * resolving (a refused URL, an address, `allowLocal`): lets a caller start that lookup early.
 */
export function findHostToResolve(raw: unknown, options: { allowLocal: boolean }): string | undefined {
  try {
    return readWebhookUrl(raw, options).host
  } catch {
    return undefined
  }
}

/** The checks that need no lookup; `host` is the name left to resolve, if any. */
function readWebhookUrl(raw: unknown, options: { allowLocal: boolean }): { url: URL; host?: string } {
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    throw new SandboxError('WEBHOOK_URL_REQUIRED', 'Send the endpoint URL as "url".')
  }
  if (typeof raw !== 'string') throw refuse('not_a_url', 'url must be a string.')
  if (raw.length > MAX_URL_LENGTH) throw refuse('too_long', `url is longer than ${MAX_URL_LENGTH} characters.`)
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw refuse('not_a_url', `"${raw}" is not a URL.`)
  }
  const allowedProtocols = options.allowLocal ? ['https:', 'http:'] : ['https:']
  if (!allowedProtocols.includes(url.protocol)) {
    throw (url.protocol === 'http:' ? refuseLocal : refuse)('not_https', `The URL must use https:// (got ${url.protocol}).`)
  }
  if (url.username || url.password) throw refuse('credentials', 'The URL must not carry a user name or password.')
  // Port 0 is "any free port" to a listener (a receiver's own --port 0 copied over), but nothing
  // can be connected to at it: every delivery would fail, local targets included.
  if (url.port === '0') throw refuse('port_zero', 'The URL names port 0, which nothing can be reached at; give the port your receiver listens on.')
  if (options.allowLocal) return { url }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (ipaddr.isValid(host)) {
    if (isForbiddenAddress(host)) throw refuseLocal('private_address', `${host} is a local, private or reserved address.`, { address: host })
    return { url }
  }
  if (LOCAL_NAME.test(host.replace(/\.$/, ''))) throw refuseLocal('local_name', `${host} is a local host name.`)
  return { url, host }
}
