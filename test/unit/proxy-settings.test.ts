import { describe, expect, it } from 'vitest'
import { describeProxy, findProxyFor, parseNoProxy, readProxySettings, shouldBypassProxy, ProxySettingsError } from '../../src/client/proxy/index.js'

const bypass = (url: string, noProxy: string) => shouldBypassProxy(new URL(url), parseNoProxy(noProxy))

describe('NO_PROXY, read as Go reads it', () => {
  it.each([
    // [url, NO_PROXY, goes directly]
    ['https://sandbox.example.com', '', false],
    ['https://sandbox.example.com', '*', true],
    ['https://sandbox.example.com', 'example.com', true],
    ['https://example.com', 'example.com', true],
    ['https://notexample.com', 'example.com', false],
    ['https://sandbox.example.com', '.example.com', true],
    ['https://example.com', '.example.com', false],
    ['https://example.com', '*.example.com', false],
    ['https://a.b.example.com', '*.example.com', true],
    ['https://SANDBOX.Example.COM', 'example.com', true],
    ['https://sandbox.example.com.', 'example.com', true],
    ['https://sandbox.example.com', 'other.org, example.com', true],
    ['https://sandbox.example.com', 'other.org example.com', true],
    ['https://sandbox.example.com', 'example.com:443', true],
    ['https://sandbox.example.com', 'example.com:8443', false],
    ['https://sandbox.example.com:8443', 'example.com:8443', true],
    ['http://sandbox.example.com', 'example.com:80', true],
    ['http://10.1.2.3:4010', '10.0.0.0/8', true],
    ['http://11.1.2.3:4010', '10.0.0.0/8', false],
    ['http://10.1.2.3:4010', '10.1.2.3', true],
    ['http://10.1.2.3:4010', '10.1.2.3:4010', true],
    ['http://10.1.2.3:4010', '10.1.2.3:80', false],
    ['http://[fd00::1]:4010', 'fd00::/8', true],
    ['http://[fd00::1]:4010', '[fd00::1]', true],
    ['http://[fd00::1]:4010', '[fd00::1]:4010', true],
    ['http://[fe80::1]:4010', 'fd00::/8', false],
    // An address is matched as one, never as a name's suffix; and only a dotted quad is an address.
    ['http://10.1.2.3', '2.3', false],
    ['http://10.0.0.10', '10', false],
    ['http://10.0.0.10', '0x0a000000/8', false],
    ['http://10.0.0.10', '10.0.0.0/33', false],
    ['https://sandbox.example.com', 'not a host!, ,,', false],
  ])('%s with NO_PROXY=%j goes directly: %s', (url, noProxy, direct) => {
    expect(bypass(url, noProxy)).toBe(direct)
  })

  it.each(['http://127.0.0.1:4010', 'http://127.8.9.10', 'http://localhost:4010', 'http://LOCALHOST', 'http://api.localhost', 'http://[::1]:4010', 'http://[::ffff:127.0.0.1]:4010'])('%s (this machine) never goes through a proxy, whatever NO_PROXY says', (url) => {
    expect(bypass(url, '')).toBe(true)
  })
})

describe('readProxySettings', () => {
  it('takes HTTPS_PROXY for https:// URLs and HTTP_PROXY for http:// ones, the lower-case name first, and none across', () => {
    const settings = readProxySettings({ HTTPS_PROXY: 'http://upper:3128', https_proxy: 'http://lower:3128', HTTP_PROXY: 'http://plain:8080' })
    expect(findProxyFor(settings, new URL('https://sandbox.example.com'))).toMatchObject({ source: 'https_proxy', url: new URL('http://lower:3128') })
    expect(findProxyFor(settings, new URL('http://sandbox.example.com'))).toMatchObject({ source: 'HTTP_PROXY', url: new URL('http://plain:8080') })
    // As curl and Go: an https:// URL does not fall back to HTTP_PROXY.
    expect(findProxyFor(readProxySettings({ HTTP_PROXY: 'http://plain:8080' }), new URL('https://sandbox.example.com'))).toBeUndefined()
    expect(findProxyFor(readProxySettings({ HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com' }), new URL('https://sandbox.example.com'))).toBeUndefined()
  })

  it('reads a proxy without a scheme as http://, and an empty variable (an unset CI secret) as none', () => {
    expect(readProxySettings({ HTTPS_PROXY: 'proxy.corp:3128' }).https?.url.href).toBe('http://proxy.corp:3128/')
    expect(readProxySettings({ HTTPS_PROXY: '', HTTP_PROXY: '  ' })).toEqual({ noProxy: [] })
    // ALL_PROXY is most often SOCKS for other tools: not read.
    expect(readProxySettings({ ALL_PROXY: 'socks5://127.0.0.1:1080' })).toEqual({ noProxy: [] })
  })

  it.each([
    [{ HTTPS_PROXY: 'socks5://127.0.0.1:1080' }, 'HTTPS_PROXY is a socks5 proxy; the sandbox\'s requests go through http:// or https:// proxies only. Set HTTPS_PROXY to one, or unset it to connect directly'],
    [{ http_proxy: 'http://user:s3cret@[bad' }, 'http_proxy=http://***@[bad is not a URL; set it as http://HOST:PORT (or http://USER:PASSWORD@HOST:PORT); percent-encode @, /, ? and # in the user name or password (%40, %2F, %3F, %23)'],
    [{ http_proxy: 'http://[bad' }, 'http_proxy=http://[bad is not a URL; set it as http://HOST:PORT (or http://USER:PASSWORD@HOST:PORT)'],
  ])('refuses %j with a message that names the variable and hides the password', (env, message) => {
    expect(() => readProxySettings(env)).toThrow(new ProxySettingsError(message))
  })

  it('describes a proxy without its password, or without a user part that may be a token', () => {
    expect(describeProxy(readProxySettings({ HTTPS_PROXY: 'http://ci:s3cret@proxy.corp:3128' }).https!)).toBe('http://ci:****@proxy.corp:3128 (HTTPS_PROXY)')
    expect(describeProxy(readProxySettings({ HTTPS_PROXY: 'https://tok3n@proxy.corp' }).https!)).toBe('https://****@proxy.corp (HTTPS_PROXY)')
    expect(describeProxy(readProxySettings({ https_proxy: 'proxy.corp:3128' }).https!)).toBe('http://proxy.corp:3128 (https_proxy)')
  })
})
