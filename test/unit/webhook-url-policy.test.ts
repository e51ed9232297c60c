import { describe, expect, it } from 'vitest'
import { SandboxError } from '../../src/errors/sandbox-error.js'
import { checkWebhookUrl, isForbiddenAddress } from '../../src/webhooks/url-policy.js'

// Names resolve through this table only: the tests never use real DNS.
const DNS: Record<string, string[]> = {
  'hooks.partner.example': ['93.184.216.34'],
  'v6.partner.example': ['2606:2800:220:1:248:1893:25c8:1946'],
  'rebind.example': ['127.0.0.1'],
  'mixed.example': ['93.184.216.34', '10.0.0.1'],
  'metadata.example': ['169.254.169.254'],
  'cgnat.example': ['100.64.1.1'],
  'mapped.example': ['::ffff:192.168.1.1'],
  'ula.example': ['fd00::1'],
  'empty.example': [],
  'local.partner.example': ['93.184.216.34'],
  'internal-hooks.partner.example': ['93.184.216.34'],
}
const resolve = async (host: string) => {
  const addresses = DNS[host]
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
  return addresses
}

async function refusal(url: unknown, allowLocal = false): Promise<[string, unknown] | 'accepted'> {
  try {
    await checkWebhookUrl(url, { allowLocal, resolve })
    return 'accepted'
  } catch (error) {
    expect(error).toBeInstanceOf(SandboxError)
    return [(error as SandboxError).code, (error as SandboxError).details?.reason]
  }
}

const HOSTILE: Array<[string, string]> = [
  // scheme and credentials
  ['http://hooks.partner.example/x', 'not_https'],
  ['ftp://hooks.partner.example/x', 'not_https'],
  ['file:///etc/passwd', 'not_https'],
  ['javascript:alert(1)', 'not_https'],
  ['ws://hooks.partner.example/', 'not_https'],
  ['https://user@hooks.partner.example/x', 'credentials'],
  ['https://user:pass@hooks.partner.example/x', 'credentials'],
  ['https://:pass@hooks.partner.example/x', 'credentials'],
  // not URLs
  ['hooks.partner.example/x', 'not_a_url'],
  ['https://', 'not_a_url'],
  ['https://exa mple.com/', 'not_a_url'],
  [`https://hooks.partner.example/${'a'.repeat(2100)}`, 'too_long'],
  // local names
  ['https://localhost/x', 'local_name'],
  ['https://LOCALHOST./x', 'local_name'],
  ['https://api.localhost/x', 'local_name'],
  ['https://printer.local/x', 'local_name'],
  ['https://db.internal/x', 'local_name'],
  ['https://router.home.arpa/x', 'local_name'],
  // IPv4 literals in every notation
  ['https://127.0.0.1/x', 'private_address'],
  ['https://127.1/x', 'private_address'],
  ['https://2130706433/x', 'private_address'],
  ['https://0x7f000001/x', 'private_address'],
  ['https://0x7f.0.0.1/x', 'private_address'],
  ['https://0177.0.0.1/x', 'private_address'],
  ['https://017700000001/x', 'private_address'],
  ['https://127.000.000.001/x', 'private_address'],
  ['https://0.0.0.0/x', 'private_address'],
  ['https://0/x', 'private_address'],
  ['https://10.0.0.1/x', 'private_address'],
  ['https://10.255.255.255/x', 'private_address'],
  ['https://172.16.0.1/x', 'private_address'],
  ['https://172.31.255.254/x', 'private_address'],
  ['https://192.168.0.1/x', 'private_address'],
  ['https://3232235521/x', 'private_address'],
  ['https://0xc0a80001/x', 'private_address'],
  ['https://169.254.169.254/latest/meta-data', 'private_address'],
  ['https://100.64.0.1/x', 'private_address'],
  ['https://100.127.255.254/x', 'private_address'],
  ['https://224.0.0.1/x', 'private_address'],
  ['https://239.255.255.250/x', 'private_address'],
  ['https://255.255.255.255/x', 'private_address'],
  ['https://192.0.2.1/x', 'private_address'],
  ['https://198.51.100.7/x', 'private_address'],
  ['https://203.0.113.9/x', 'private_address'],
  ['https://198.18.0.1/x', 'private_address'],
  ['https://240.0.0.1/x', 'private_address'],
  ['https://192.0.0.8/x', 'private_address'],
  ['https://127.0.0.1:8443/x', 'private_address'],
  // IPv6 literals
  ['https://[::1]/x', 'private_address'],
  ['https://[0:0:0:0:0:0:0:1]/x', 'private_address'],
  ['https://[::]/x', 'private_address'],
  ['https://[::ffff:127.0.0.1]/x', 'private_address'],
  ['https://[::ffff:7f00:1]/x', 'private_address'],
  ['https://[::ffff:10.0.0.1]/x', 'private_address'],
  ['https://[::ffff:a9fe:a9fe]/x', 'private_address'],
  ['https://[fe80::1]/x', 'private_address'],
  ['https://[fc00::1]/x', 'private_address'],
  ['https://[fd12:3456:789a::1]/x', 'private_address'],
  ['https://[ff02::1]/x', 'private_address'],
  ['https://[2001:db8::1]/x', 'private_address'],
  ['https://[64:ff9b::7f00:1]/x', 'private_address'],
  ['https://[64:ff9b::a00:1]/x', 'private_address'],
  ['https://[2002:7f00:1::1]/x', 'private_address'],
  ['https://[2002:c0a8:101::1]/x', 'private_address'],
  ['https://[2001::1]/x', 'private_address'],
  // IPv4-compatible (deprecated ::/96) and other space outside global unicast 2000::/3
  ['https://[::127.0.0.1]/x', 'private_address'],
  ['https://[::7f00:1]/x', 'private_address'],
  ['https://[::a00:1]/x', 'private_address'],
  ['https://[::a9fe:a9fe]/x', 'private_address'],
  ['https://[::8.8.8.8]/x', 'private_address'],
  ['https://[4000::1]/x', 'private_address'],
  ['https://[100::1]/x', 'private_address'],
  // names that resolve to forbidden addresses (checked again at delivery time)
  ['https://rebind.example/x', 'private_address'],
  ['https://mixed.example/x', 'private_address'],
  ['https://metadata.example/x', 'private_address'],
  ['https://cgnat.example/x', 'private_address'],
  ['https://mapped.example/x', 'private_address'],
  ['https://ula.example/x', 'private_address'],
  ['https://nxdomain.example/x', 'unresolvable'],
  ['https://empty.example/x', 'unresolvable'],
]

describe('webhook URL policy', () => {
  it(`refuses ${HOSTILE.length} hostile URLs with WEBHOOK_URL_INVALID and the reason`, async () => {
    for (const [url, reason] of HOSTILE) {
      expect(await refusal(url), url).toEqual(['WEBHOOK_URL_INVALID', reason])
    }
  })

  it('answers WEBHOOK_URL_REQUIRED for a missing or empty url, and not_a_url for other types', async () => {
    for (const url of [undefined, null, '', '   ']) expect(await refusal(url)).toEqual(['WEBHOOK_URL_REQUIRED', undefined])
    for (const url of [42, {}, ['https://hooks.partner.example']]) expect(await refusal(url)).toEqual(['WEBHOOK_URL_INVALID', 'not_a_url'])
    await expect(checkWebhookUrl({}, { allowLocal: false, resolve })).rejects.toThrow('url must be a string.')
  })

  it('takes a URL of up to 2048 characters', async () => {
    const base = 'https://hooks.partner.example/'
    expect(await refusal(base + 'a'.repeat(2048 - base.length))).toBe('accepted')
    expect(await refusal(base + 'a'.repeat(2049 - base.length))).toEqual(['WEBHOOK_URL_INVALID', 'too_long'])
  })

  it('names the forbidden address a host resolves to', async () => {
    const addressOf = (url: string) => checkWebhookUrl(url, { allowLocal: false, resolve }).then(() => 'accepted', (error: SandboxError) => error.details?.address)
    expect(await addressOf('https://rebind.example/x')).toBe('127.0.0.1')
    expect(await addressOf('https://mixed.example/x')).toBe('10.0.0.1')
  })

  it('accepts public https URLs, by name or public address', async () => {
    // Names that only start like a local one are public.
    for (const url of ['https://hooks.partner.example/x', 'https://hooks.partner.example:8443/a/b?c=d', 'https://v6.partner.example/', 'https://93.184.216.34/hook', 'https://[2606:2800:220:1:248:1893:25c8:1946]/hook', 'https://local.partner.example/x', 'https://internal-hooks.partner.example/x']) {
      expect(await refusal(url), url).toBe('accepted')
    }
  })

  it('accepts http and local targets in --allow-local-webhooks mode, but never credentials', async () => {
    for (const url of ['http://localhost:3000/webhooks', 'http://127.0.0.1:4242/', 'https://10.0.0.5/x', 'http://[::1]:8080/']) {
      expect(await refusal(url, true), url).toBe('accepted')
    }
    expect(await refusal('http://u:p@localhost:3000/', true)).toEqual(['WEBHOOK_URL_INVALID', 'credentials'])
    expect(await refusal('ftp://localhost/', true)).toEqual(['WEBHOOK_URL_INVALID', 'not_https'])
  })

  it('tells how to reach a receiver on this machine when it refuses one, and only then', async () => {
    const messageOf = (url: string) => checkWebhookUrl(url, { allowLocal: false, resolve }).then(() => 'accepted', (error: SandboxError) => error.message)
    for (const url of ['http://127.0.0.1:3000/hooks', 'https://localhost/x', 'https://rebind.example/x', 'http://hooks.partner.example/x']) {
      expect(await messageOf(url), url).toContain('sandbox serve --allow-local-webhooks')
    }
    for (const url of ['ftp://hooks.partner.example/x', 'https://user@hooks.partner.example/x', 'https://empty.example/x']) {
      expect(await messageOf(url), url).not.toContain('--allow-local-webhooks')
    }
  })

  it('classifies addresses for the delivery-time check', () => {
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.1.2.3', 'fe80::1%eth0', 'not-an-ip']) expect(isForbiddenAddress(address), address).toBe(true)
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect(isForbiddenAddress(address), address).toBe(false)
    // IPv4 inside IPv6 (mapped, NAT64, IPv4-translated, 6to4) is judged by its IPv4 part, both ways;
    // 192.0.2.1 is documentation space, 192.0.1.2 (its last two bytes swapped) is public.
    for (const address of ['::ffff:8.8.8.8', '64:ff9b::808:808', '64:ff9b::c000:102', '::ffff:0:808:808', '2002:808:808::1']) expect(isForbiddenAddress(address), address).toBe(false)
    for (const address of ['64:ff9b::c000:201', '::ffff:0:c000:201', '::ffff:0:7f00:1', '2002:c000:201::1']) expect(isForbiddenAddress(address), address).toBe(true)
    // Teredo is refused whatever it embeds: this one's client is 192.0.2.45 behind public server 65.54.227.120.
    expect(isForbiddenAddress('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toBe(true)
  })
})
