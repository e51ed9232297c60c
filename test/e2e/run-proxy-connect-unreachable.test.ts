import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { startForwardProxy, type ForwardProxy } from '../helpers/forward-proxy.js'
import { useProxiedSandbox } from '../helpers/reverse-proxy.js'

// A forward proxy (HTTPS_PROXY) that cannot reach the server answers CONNECT with 502, 503 or
// 504, as Squid does for a host that is down or restarting: no refusal of the host, so retried
// and waited for like the proxy's 503 page to a plain http:// request, and told as it is.
// `sandbox.test` is tunnelled to 127.0.0.1 and never looked up.

const CERT = join(import.meta.dirname, '../fixtures/tls/proxied-cert.pem')
const upstreamSandbox = useProxiedSandbox()
const proxies: ForwardProxy[] = []
afterEach(async () => {
  killAll()
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()))
})

async function startProxy(refuseConnect: () => number | undefined): Promise<ForwardProxy> {
  const tlsPort = Number(new URL((await upstreamSandbox.proxy({ tls: 'sandbox.test' })).url).port)
  const proxy = await startForwardProxy({ routes: { 'sandbox.test:443': tlsPort }, refuseConnect })
  proxies.push(proxy)
  return proxy
}

describe('sandbox run through a proxy that cannot reach the server', () => {
  it('retries a 503 to CONNECT, then stops (exit 2) saying the proxy could not reach the server, not that it refuses the host', async () => {
    const proxy = await startProxy(() => 503)
    const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', 'https://sandbox.test'], { env: { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: CERT } })
    expect(code).toBe(2)
    expect(stderr).toBe('sandbox: cannot reach https://sandbox.test/api/sandbox/state: the HTTP proxy answered 503 to CONNECT sandbox.test:443 4 times instead of opening a tunnel: it could not reach the server (down or restarting, or a name the proxy cannot resolve); is the server up? (NO_PROXY=sandbox.test to connect directly)\n')
    expect(stdout).toContain('network error (the proxy answered 503): waiting 100 ms, then GET /api/sandbox/state again (attempt 2 of 4)')
    expect(proxy.requests.map((request) => request.method)).toEqual(['CONNECT', 'CONNECT', 'CONNECT', 'CONNECT'])
  })

  it('--wait waits through 502/503/504 to CONNECT until the proxy reaches the server, and the run passes', async () => {
    // 3 s from the first CONNECT: longer than a request's retries (100 + 200 + 400 ms).
    let upAt: number | undefined
    let count = 0
    const proxy = await startProxy(() => {
      upAt ??= performance.now() + 3_000
      return performance.now() < upAt ? [502, 503, 504][count++ % 3] : undefined
    })
    const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', 'https://sandbox.test', '--wait', '20s'], { env: { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: CERT } })
    expect(stderr).toBe('')
    expect([code, stdout.trimEnd().split('\n').at(-1)]).toEqual([0, '1 passed, 0 failed'])
  })
})
