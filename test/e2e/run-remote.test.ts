import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createSandbox, type Sandbox } from '../../src/server/create-sandbox.js'
import { listenSandbox } from '../../src/server/listen.js'
import { killAll, runCli } from '../helpers/cli.js'
import { answerHtml, startReverseProxy, type ReverseProxy } from '../helpers/reverse-proxy.js'

// `sandbox run` against a sandbox behind a proxy on 127.0.0.1, as a deployed one would be.

const CERT = join(import.meta.dirname, '../fixtures/tls/cert.pem')
let upstream: string
let sandbox: Sandbox
let closeUpstream: () => Promise<void>
const proxies: ReverseProxy[] = []

beforeAll(async () => {
  sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {} })
  const listener = await listenSandbox(sandbox)
  upstream = listener.url.replace(/\/+$/, '')
  closeUpstream = async () => { await listener.close(); await sandbox.close() }
})
afterEach(async () => {
  killAll()
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()))
})
afterAll(() => closeUpstream())

describe('sandbox run against a remote sandbox', () => {
  it('an untrusted certificate: exit 2 at once, naming NODE_EXTRA_CA_CERTS, which then makes the run pass', async () => {
    const tls = await startReverseProxy(upstream, { tls: true })
    proxies.push(tls)
    const untrusted = await runCli(['run', 'loan-flow', '--base-url', tls.url])
    expect(untrusted.code).toBe(2)
    expect(untrusted.stdout).not.toContain('network error')
    expect(untrusted.stderr).toBe(`sandbox: cannot reach ${tls.url}/api/sandbox/state (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate); its TLS certificate is not trusted here: give its CA with NODE_EXTRA_CA_CERTS=ca.pem\n`)
    const trusted = await runCli(['run', 'loan-flow', '--base-url', tls.url], { env: { NODE_EXTRA_CA_CERTS: CERT } })
    expect([trusted.code, trusted.stdout.trimEnd().split('\n').at(-1)]).toEqual([0, '1 passed, 0 failed'])
  })

  it('an untrusted certificate with --wait 30s: exit 2 at once with the same message, not after the 30 s', async () => {
    const tls = await startReverseProxy(upstream, { tls: true })
    proxies.push(tls)
    const started = performance.now()
    const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', tls.url, '--wait', '30s'])
    const elapsed = performance.now() - started
    expect(code).toBe(2)
    expect(stdout).not.toContain('network error')
    expect(stderr).toBe(`sandbox: cannot reach ${tls.url}/api/sandbox/state (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate); its TLS certificate is not trusted here: give its CA with NODE_EXTRA_CA_CERTS=ca.pem\n`)
    expect(elapsed).toBeLessThan(10_000)
  }, 45_000)

  it('an https:// base URL for a plain-http server: exit 2 at once, even with --wait, suggesting http://', async () => {
    const https = upstream.replace('http://', 'https://')
    const started = performance.now()
    const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', https, '--wait', '30s'])
    const elapsed = performance.now() - started
    expect(code).toBe(2)
    // Sent once: no retry lines, and neither --wait nor the retries spend any time on it.
    expect(stdout).not.toContain('network error')
    expect(stderr).toBe(`sandbox: cannot reach ${https}/api/sandbox/state: the server there answers plain HTTP, not TLS (ERR_SSL_WRONG_VERSION_NUMBER); use http:// rather than https:// (${upstream})\n`)
    expect(elapsed).toBeLessThan(10_000)
  })

  it('a proxy\'s 502 is retried with a line saying so; a base URL that redirects stops the run (exit 2) with the URL to use', async () => {
    const flaky = await startReverseProxy(upstream, { handler: (_request, response, forward, index) => (index === 2 ? answerHtml(response, 502) : forward()) })
    proxies.push(flaky)
    const retried = await runCli(['run', 'loan-flow', '--base-url', flaky.url])
    expect(retried.code).toBe(0)
    expect(retried.stdout).toMatch(/^ {6}502 from a proxy in front of the server \(not the sandbox's own answer\): waiting 250 ms, then POST \/api\/sandbox\/loans\/flow again with the same Idempotency-Key \(attempt 2 of 4\)$/m)

    const moved = await startReverseProxy(upstream, { handler: (request, response) => {
      response.writeHead(308, { location: `https://127.0.0.1:1${request.url}` })
      response.end()
    } })
    proxies.push(moved)
    const redirected = await runCli(['run', 'loan-flow', 'repay-full', '--base-url', moved.url, '--json'])
    expect(redirected.code).toBe(2)
    const message = 'the server answered 308, a redirect to https://127.0.0.1:1/api/sandbox/state: redirects are not followed (a POST would come back as a GET, and the key is not sent to another origin); use --base-url https://127.0.0.1:1'
    expect(JSON.parse(redirected.stdout).scenarios.map((scenario: { status: string; error: string }) => [scenario.status, scenario.error])).toEqual([
      ['failed', message],
      ['skipped', 'not run: the run stopped when loan-flow could not reach the server'],
    ])
    expect(redirected.stderr).toBe(`sandbox: ${message}\n`)
    expect(moved.requests).toHaveLength(1)
  })

  it('an API key with a line break (a key file saved with CRLF) is refused before any request, without printing it whole', async () => {
    const key = 'sk_sandbox_secret_key_0123456789abcdef'
    const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', 'http://127.0.0.1:9'], { env: { SANDBOX_API_KEY: `${key}\r` } })
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe('sandbox: SANDBOX_API_KEY holds a space, line break or other character a key cannot have (a key file saved with CRLF line ends, or a trailing newline?): "sk_sandbox_s..."\n')
    const bearer = await runCli(['run', 'loan-flow', '--base-url', 'http://127.0.0.1:9', '--api-key', `Bearer ${key}`])
    expect(bearer.code).toBe(2)
    expect(bearer.stderr).toBe('sandbox: --api-key must be a sandbox key (sk_sandbox_...), got "Bearer sk_sa..." (the key alone: the run sends "Authorization: Bearer KEY" itself)\n')
  })
})
