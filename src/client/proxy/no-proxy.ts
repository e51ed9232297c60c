import ipaddr from 'ipaddr.js'
// NoProxyRule is in the client's declarations (ProxySettings.noProxy), so it names ipaddr.js's
// classes through a type import: through the default import its declaration would need
// `esModuleInterop` in a `module: commonjs` consumer (ipaddr.js declares `export =`).
import type { IPv4, IPv6 } from 'ipaddr.js'

/** One NO_PROXY entry: every host, a domain (and its subdomains), or an address range, with an optional port. */
export type NoProxyRule =
  | { kind: 'all' }
  | { kind: 'domain'; domain: string; subdomainsOnly: boolean; port?: number }
  | { kind: 'range'; range: [IPv4 | IPv6, number]; port?: number }

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 }

/** An address as Go's net.ParseIP takes it: a dotted quad or IPv6, not ipaddr.js's `10` or `0x0a`. */
function isPlainAddress(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text) || (text.includes(':') && ipaddr.IPv6.isValid(text))
}

function parseRange(text: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | undefined {
  const [address = '', bits, ...rest] = text.replace(/^\[(.*)\]$/, '$1').split('/')
  if (rest.length > 0 || !isPlainAddress(address)) return undefined
  if (bits === undefined) {
    const parsed = ipaddr.parse(address)
    return [parsed, parsed.kind() === 'ipv4' ? 32 : 128]
  }
  return /^\d{1,3}$/.test(bits) && ipaddr.isValidCIDR(`${address}/${bits}`) ? ipaddr.parseCIDR(`${address}/${bits}`) : undefined
}

/** Splits `host:port` and `[v6]:port`; a bare IPv6 address (several colons) has no port. */
function splitPort(entry: string): { host: string; port?: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(entry)
  return match ? { host: match[1]!, port: Number(match[2]) } : { host: entry }
}

/**
 * Reads NO_PROXY as Go's net/http does (what stripe-cli and most CI tools follow): comma- or
 * space-separated; `*` for every host; a domain matches itself and its subdomains, and with a
 * leading `.` (or `*.`) its subdomains only; an IP address or CIDR range matches the addresses in
 * it; any entry may end in `:port`. Entries that fit none are skipped, as Go skips them.
 */
export function parseNoProxy(text: string | undefined): NoProxyRule[] {
  const rules: NoProxyRule[] = []
  for (const raw of (text ?? '').split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase()
    if (entry === '') continue
    if (entry === '*') {
      rules.push({ kind: 'all' })
      continue
    }
    // A CIDR's "/8" is not a port, and a bare IPv6 address is all colons.
    const { host, port } = entry.includes('/') || parseRange(entry) ? { host: entry } : splitPort(entry)
    const range = parseRange(host)
    if (range) {
      rules.push({ kind: 'range', range, ...(port === undefined ? {} : { port }) })
      continue
    }
    const subdomainsOnly = host.startsWith('.') || host.startsWith('*.')
    const domain = host.replace(/^\*?\./, '').replace(/\.$/, '')
    if (/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(domain)) rules.push({ kind: 'domain', domain, subdomainsOnly, ...(port === undefined ? {} : { port }) })
  }
  return rules
}

/** Whether a URL's host is this machine: `localhost`, a `*.localhost` name or a loopback address. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '')
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  if (!ipaddr.isValid(host)) return false
  const address = ipaddr.process(host)
  return address.range() === 'loopback'
}

function isInRange(address: ipaddr.IPv4 | ipaddr.IPv6, [base, bits]: [ipaddr.IPv4 | ipaddr.IPv6, number]): boolean {
  if (address.kind() !== base.kind()) return false
  return address.kind() === 'ipv4' ? (address as ipaddr.IPv4).match(base as ipaddr.IPv4, bits) : (address as ipaddr.IPv6).match(base as ipaddr.IPv6, bits)
}

/**
 * Whether a request to URL goes straight to it rather than through the proxy: loopback always
 * (as Go does: a proxy cannot reach this machine's 127.0.0.1), and hosts NO_PROXY names.
 */
export function shouldBypassProxy(url: URL, rules: readonly NoProxyRule[]): boolean {
  if (isLoopbackHost(url.hostname)) return true
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '')
  const port = url.port ? Number(url.port) : DEFAULT_PORTS[url.protocol]
  const address = ipaddr.isValid(host) ? ipaddr.process(host) : undefined
  return rules.some((rule) => {
    if (rule.kind === 'all') return true
    if (rule.port !== undefined && rule.port !== port) return false
    if (rule.kind === 'range') return address !== undefined && isInRange(address, rule.range)
    if (address) return false
    return host.endsWith(`.${rule.domain}`) || (!rule.subdomainsOnly && host === rule.domain)
  })
}
