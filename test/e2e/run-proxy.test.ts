import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { killAll, runCli, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'
import { startForwardProxy, type ForwardProxy, type ForwardProxyOptions } from '../helpers/forward-proxy.js'
import { findClosedPort } from '../helpers/receiver.js'
import { useProxiedSandbox } from '../helpers/reverse-proxy.js'

// `sandbox run` from behind a corporate or CI forward proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY).
// The proxy runs on 127.0.0.1 and reaches only the sandbox's ports there: `sandbox.test` is never
// looked up, so nothing leaves the machine.

const CERT = join(import.meta.dirname, '../fixtures/tls/proxied-cert.pem')
const upstreamSandbox = useProxiedSandbox()
let plainPort: number
const proxies: ForwardProxy[] = []

beforeAll(async () => {
  plainPort = Number(new URL(upstreamSandbox.url).port)
})
afterEach(async () => {
  killAll()
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()))
})

async function startProxy(options: Omit<ForwardProxyOptions, 'routes'> = {}): Promise<ForwardProxy> {
  // The https sandbox is a TLS proxy in front of the upstream, with the certificate for sandbox.test.
  const tlsPort = Number(new URL((await upstreamSandbox.proxy({ tls: 'sandbox.test' })).url).port)
  const proxy = await startForwardProxy({ routes: { 'sandbox.test:443': tlsPort, 'sandbox.test:4010': plainPort }, ...options })
  proxies.push(proxy)
  return proxy
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1)
const tempDir = useTempDirs('sandbox-run-proxy')

describe('sandbox run through an HTTP proxy', () => {
  // A remote sandbox of another API version (as the hosted one after a breaking change): said
  // above the summary, once its scenarios reached it; the JSON report carries the version.
  it('a remote server of another api_version: a note above the summary, and api_version in the --json report', async () => {
    const config = join(await tempDir(), 'newer.json')
    await writeFile(config, '{"api_version":"0.4.0"}')
    const newer = await startServe(['--port', '0', '--storage', 'memory', '--config', config])
    const proxy = await startForwardProxy({ routes: { 'sandbox.test:4010': Number(new URL(newer.url).port) } })
    proxies.push(proxy)
    const env = { HTTP_PROXY: proxy.url }
    const text = await runCli(['run', 'loan-flow', '--base-url', 'http://sandbox.test:4010'], { env })
    expect(text.code).toBe(0)
    expect(text.stdout.trimEnd().split('\n').slice(-4)).toEqual([
      'the server answers api_version 0.4.0; these scenarios are written for 0.3.0, so a failure may be a change of the API (a newer partner-sandbox may know it)',
      '',
      expect.stringMatching(/^1 scenario, 10 requests in /),
      '1 passed, 0 failed',
    ])
    const json = await runCli(['run', 'loan-flow', '--base-url', 'http://sandbox.test:4010', '--json'], { env })
    expect(JSON.parse(json.stdout)).toMatchObject({ passed: 1, api_version: '0.4.0', requests: 10 })
    expect(json.stderr).toContain('sandbox: the server answers api_version 0.4.0;')
    await newer.stop()
  })

  it("a remote server's api_version with control characters: the note shows them escaped, not acting on the terminal", async () => {
    const hostile = await upstreamSandbox.proxy({ handler: (request, response, forward) => {
      if (request.url !== '/api/sandbox/config') return forward()
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ request_id: 'req_1', api_version: '0.4.0\u001b]0;owned\u0007\u001b[2J' }))
    } })
    const proxy = await startForwardProxy({ routes: { 'sandbox.test:4010': Number(new URL(hostile.url).port) } })
    proxies.push(proxy)
    for (const json of [false, true]) {
      const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', 'http://sandbox.test:4010', ...(json ? ['--json'] : [])], { env: { HTTP_PROXY: proxy.url } })
      expect(code).toBe(0)
      expect(json ? stderr : stdout).toContain('the server answers api_version 0.4.0\\u001b]0;owned\\u0007\\u001b[2J; these scenarios')
      expect(stdout + stderr).not.toContain('\u001b]0;owned')
    }
  })

  it('an https:// base URL goes through HTTPS_PROXY in a CONNECT tunnel, and the run says so', async () => {
    const proxy = await startProxy()
    const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', 'https://sandbox.test'], { env: { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: CERT } })
    expect([code, stderr, lastLine(stdout)]).toEqual([0, '', '1 passed, 0 failed'])
    expect(stdout).toContain(`requests to https://sandbox.test go through the proxy ${proxy.url} (HTTPS_PROXY)\n`)
    expect(proxy.requests.length).toBeGreaterThan(0)
    expect(new Set(proxy.requests.map((request) => `${request.method} ${request.target}`))).toEqual(new Set(['CONNECT sandbox.test:443']))
  })

  it('an http:// base URL goes through http_proxy as absolute-form requests, not CONNECT (which proxies refuse but to port 443)', async () => {
    const proxy = await startProxy({ refuseConnect: 403 })
    const { code, stdout } = await runCli(['run', 'loan-flow', '--base-url', 'http://sandbox.test:4010'], { env: { http_proxy: proxy.url } })
    expect([code, lastLine(stdout)]).toEqual([0, '1 passed, 0 failed'])
    expect(stdout).toContain(`go through the proxy ${proxy.url} (http_proxy)`)
    // With --json the note goes to stderr, and stdout holds the report alone.
    const json = await runCli(['run', 'loan-flow', '--base-url', 'http://sandbox.test:4010', '--json'], { env: { http_proxy: proxy.url } })
    expect(json.stderr).toBe(`sandbox: requests to http://sandbox.test:4010 go through the proxy ${proxy.url} (http_proxy)\n`)
    expect(JSON.parse(json.stdout)).toMatchObject({ passed: 1, failed: 0 })
    expect(proxy.requests.some((request) => request.method === 'POST' && request.target.startsWith('http://sandbox.test:4010/api/sandbox/'))).toBe(true)
    expect(proxy.requests.every((request) => request.method !== 'CONNECT')).toBe(true)
  })

  it('sends the credentials of the proxy URL, and never prints its password; a 407 is exit 2 saying where credentials go', async () => {
    const proxy = await startProxy({ requireAuthorization: `Basic ${Buffer.from('ci:s3cret').toString('base64')}` })
    const withAuth = proxy.url.replace('http://', 'http://ci:s3cret@')
    const good = await runCli(['run', 'loan-flow', '--base-url', 'https://sandbox.test'], { env: { HTTPS_PROXY: withAuth, NODE_EXTRA_CA_CERTS: CERT } })
    expect([good.code, lastLine(good.stdout)]).toEqual([0, '1 passed, 0 failed'])
    expect(good.stdout).toContain(`go through the proxy ${proxy.url.replace('http://', 'http://ci:****@')} (HTTPS_PROXY)`)
    const bad = await runCli(['run', 'loan-flow', '--base-url', 'https://sandbox.test'], { env: { HTTPS_PROXY: withAuth.replace('s3cret', 'wrong'), NODE_EXTRA_CA_CERTS: CERT } })
    expect(bad.code).toBe(2)
    const refused = 'the HTTP proxy answered 407 Proxy Authentication Required: give its credentials in the proxy variable, as http://USER:PASSWORD@HOST:PORT\n'
    expect(bad.stderr).toBe(`sandbox: cannot reach https://sandbox.test/api/sandbox/state: ${refused}`)
    // Plain http:// goes to the proxy as a request of its own, which it answers 407: not retried either.
    const sent = proxy.requests.length
    const plain = await runCli(['run', 'loan-flow', '--base-url', 'http://sandbox.test:4010'], { env: { HTTP_PROXY: proxy.url } })
    expect([plain.code, plain.stderr]).toEqual([2, `sandbox: cannot reach http://sandbox.test:4010/api/sandbox/state: ${refused}`])
    expect(proxy.requests.length - sent).toBe(1)
    expect(`${good.stdout}${good.stderr}${bad.stdout}${bad.stderr}`).not.toMatch(/s3cret|wrong/)
  })

  it('a proxy that refuses the tunnel: exit 2 at once, even with --wait, sent once, saying NO_PROXY would connect directly', async () => {
    const proxy = await startProxy({ refuseConnect: 403 })
    const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', 'https://sandbox.test', '--wait', '30s'], { env: { HTTPS_PROXY: proxy.url } })
    expect(code).toBe(2)
    expect(stdout).not.toContain('timed out')
    expect(stderr).toBe('sandbox: cannot reach https://sandbox.test/api/sandbox/state: the HTTP proxy answered 403 to CONNECT sandbox.test:443 instead of opening a tunnel: it does not let this host through; have it allowed, or name the host in NO_PROXY to connect directly\n')
    // One for --wait's probe, one for the run's first request: neither retried.
    expect(proxy.requests.map((request) => request.method)).toEqual(['CONNECT', 'CONNECT'])
  })

  it('a proxy that is down: exit 2 naming the proxy and NO_PROXY, not "is the server running?"', async () => {
    const closed = `http://127.0.0.1:${await findClosedPort()}`
    const { code, stderr } = await runCli(['run', 'loan-flow', '--base-url', 'https://sandbox.test', '--timeout', '2s'], { env: { HTTPS_PROXY: closed } })
    expect(code).toBe(2)
    expect(stderr).toBe(`sandbox: cannot reach https://sandbox.test/api/sandbox/state (ECONNREFUSED) after 4 attempts; the requests went through the proxy ${closed} (HTTPS_PROXY): is it up, and can it reach the server? (NO_PROXY=sandbox.test to connect directly)\n`)
  })

  it('this machine is reached directly: a 127.0.0.1 base URL, and the in-process server, with every proxy variable set', async () => {
    const proxy = await startProxy()
    const env = { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url, https_proxy: proxy.url, http_proxy: proxy.url }
    for (const args of [['--base-url', upstreamSandbox.url], []]) {
      const { code, stdout } = await runCli(['run', 'loan-flow', ...args], { env })
      expect([code, lastLine(stdout)]).toEqual([0, '1 passed, 0 failed'])
      expect(stdout).not.toContain('go through the proxy')
    }
    expect(proxy.requests).toEqual([])
  })

  it('a proxy password with an unencoded / or @: exit 2 saying to percent-encode it, the password hidden whole', async () => {
    for (const [password, shown] of [['pa/ss0rd', 'http://***@127.0.0.1:3128'], ['pa?ss0rd', 'http://***@127.0.0.1:3128']]) {
      const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', 'https://sandbox.test', '--json'], { env: { HTTPS_PROXY: `http://ci:${password}@127.0.0.1:3128` } })
      expect(code, password).toBe(2)
      expect(JSON.parse(stdout), password).toEqual({ error: { code: 'PROXY', message: `HTTPS_PROXY=${shown} is not a URL; set it as http://HOST:PORT (or http://USER:PASSWORD@HOST:PORT); percent-encode @, /, ? and # in the user name or password (%40, %2F, %3F, %23)` } })
      expect(stdout + stderr, password).not.toMatch(/0rd|ss0/)
    }
  })

  it('a proxy URL with a path: the path is left out, as curl and Go leave it out', async () => {
    const proxy = await startProxy()
    for (const [variable, baseUrl] of [['HTTPS_PROXY', 'https://sandbox.test'], ['HTTP_PROXY', 'http://sandbox.test:4010']]) {
      const withPath = await runCli(['run', 'loan-flow', '--base-url', baseUrl!], { env: { [variable!]: `${proxy.url}/some/path?x=1`, NODE_EXTRA_CA_CERTS: CERT } })
      expect([withPath.code, withPath.stderr, lastLine(withPath.stdout)], variable).toEqual([0, '', '1 passed, 0 failed'])
      expect(withPath.stdout).toContain(`go through the proxy ${proxy.url} (${variable})\n`)
    }
  })

  it('a SOCKS proxy variable: exit 2 before any request, as {"error"} under --json', async () => {
    const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', 'https://sandbox.test', '--json'], { env: { HTTPS_PROXY: 'socks5://127.0.0.1:1080' } })
    expect(code).toBe(2)
    expect(JSON.parse(stdout)).toEqual({ error: { code: 'PROXY', message: 'HTTPS_PROXY is a socks5 proxy; the sandbox\'s requests go through http:// or https:// proxies only. Set HTTPS_PROXY to one, or unset it to connect directly' } })
    expect(stderr).toContain('HTTPS_PROXY is a socks5 proxy')
  })

  it('a SOCKS proxy variable under the webhook commands: the same PROXY error, which names no other command', async () => {
    for (const args of [['webhook', 'deliveries'], ['webhook', 'trigger', 'loan.issued']]) {
      const { code, stdout } = await runCli([...args, '--base-url', 'https://sandbox.test', '--api-key', 'sk_sandbox_proxy_e2e_key_aaaa', '--json'], { env: { HTTPS_PROXY: 'socks5://127.0.0.1:1080' } })
      expect([args.join(' '), code]).toEqual([args.join(' '), 2])
      expect(JSON.parse(stdout)).toEqual({ error: { code: 'PROXY', message: 'HTTPS_PROXY is a socks5 proxy; the sandbox\'s requests go through http:// or https:// proxies only. Set HTTPS_PROXY to one, or unset it to connect directly' } })
    }
  })
})
