import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { answerHtml, useProxiedSandbox } from '../helpers/reverse-proxy.js'

// `sandbox run` against a sandbox behind a proxy on 127.0.0.1, as a deployed one would be.

const CERT = join(import.meta.dirname, '../fixtures/tls/cert.pem')
// The self-signed certificate for sandbox.test: trusted as its own CA, yet not for 127.0.0.1.
const PROXIED_CERT = join(import.meta.dirname, '../fixtures/tls/proxied-cert.pem')
const upstreamSandbox = useProxiedSandbox()
let upstream: string

beforeAll(() => {
  upstream = upstreamSandbox.url
})
afterEach(() => {
  killAll()
})

describe('sandbox run against a remote sandbox', () => {
  it('an untrusted certificate: exit 2 at once, even with --wait, naming NODE_EXTRA_CA_CERTS, which then makes the run pass', async () => {
    const tls = await upstreamSandbox.proxy({ tls: true })
    const started = performance.now()
    const untrusted = await runCli(['run', 'loan-flow', '--base-url', tls.url, '--wait', '30s'])
    // The server is up: waiting would not make its certificate trusted, so --wait ends at once.
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(untrusted.code).toBe(2)
    expect(untrusted.stdout).not.toContain('network error')
    expect(untrusted.stderr).toBe(`sandbox: cannot reach ${tls.url}/api/sandbox/state (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate); its TLS certificate is not trusted here: give its CA with NODE_EXTRA_CA_CERTS=ca.pem\n`)
    const trusted = await runCli(['run', 'loan-flow', '--base-url', tls.url], { env: { NODE_EXTRA_CA_CERTS: CERT } })
    expect([trusted.code, trusted.stdout.trimEnd().split('\n').at(-1)]).toEqual([0, '1 passed, 0 failed'])
  })

  it('a trusted certificate for another name: exit 2 at once, saying the certificate is not for that host rather than to trust its CA', async () => {
    const tls = await upstreamSandbox.proxy({ tls: 'sandbox.test' })
    const other = await runCli(['run', 'loan-flow', '--base-url', tls.url], { env: { NODE_EXTRA_CA_CERTS: PROXIED_CERT } })
    expect(other.code).toBe(2)
    expect(other.stderr).toMatch(/^sandbox: cannot reach https:\/\/127\.0\.0\.1:\d+\/api\/sandbox\/state \(ERR_TLS_CERT_ALTNAME_INVALID: [^\n]*\); its TLS certificate is not for 127\.0\.0\.1: use a host name the certificate names in the URL, or make one that names 127\.0\.0\.1 \(mkcert 127\.0\.0\.1\)\n$/)
  })

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

  it('a replay after a 429 is not excused: a server that carried out a request it answered 429 fails the step expecting a first execution', async () => {
    let executed = false
    // Carries out the loan's start, then answers 429 as if it had refused it: the request sent
    // again gets the stored answer, replayed, as from a rate limiter placed after the handler.
    const limiter = await upstreamSandbox.proxy({ handler: (request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        const body = Buffer.concat(chunks)
        const refuse = !executed && body.toString().includes('"loan_amount":200,')
        if (refuse) executed = true
        httpRequest(`${upstreamSandbox.url}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
          if (!refuse) {
            response.writeHead(answer.statusCode!, answer.headers)
            answer.pipe(response)
            return
          }
          answer.resume()
          response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' })
          response.end(JSON.stringify({ request_id: 'req_x', error_code: 'SANDBOX_RATE_LIMIT_EXCEEDED', error: 'Rate limited.' }))
        }).end(body)
      })
    } })
    const run = await runCli(['run', 'loan-flow', '--base-url', limiter.url])
    expect(executed).toBe(true)
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/^ {6}429 rate limited: waiting 0 ms, then POST \/api\/sandbox\/loans\/flow again with the same Idempotency-Key/m)
    expect(run.stdout).toMatch(/body\.idempotency_replayed\n {8}- expected false\n {8}\+ received true/)
    expect(run.stdout).not.toContain('the first answer was lost')
  })

  it('a proxy\'s 502 is retried with a line saying so; a base URL that redirects stops the run (exit 2, at once even with --wait) with the URL to use', async () => {
    const flaky = await upstreamSandbox.proxy({ handler: (_request, response, forward, index) => (index === 2 ? answerHtml(response, 502) : forward()) })
    const retried = await runCli(['run', 'loan-flow', '--base-url', flaky.url])
    expect(retried.code).toBe(0)
    expect(retried.stdout).toMatch(/^ {6}502 from a proxy in front of the server \(not the sandbox's own answer\): waiting 250 ms, then POST \/api\/sandbox\/loans\/flow again with the same Idempotency-Key \(attempt 2 of 4\)$/m)

    const moved = await upstreamSandbox.proxy({ handler: (request, response) => {
      response.writeHead(308, { location: `https://127.0.0.1:1${request.url}` })
      response.end()
    } })
    const started = performance.now()
    const redirected = await runCli(['run', 'loan-flow', 'repay-full', '--base-url', moved.url, '--json', '--wait', '30s'])
    // A redirect is an answer: --wait ends there rather than following it to a port that refuses.
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(redirected.code).toBe(2)
    const message = 'the server answered 308, a redirect to https://127.0.0.1:1/api/sandbox/state: redirects are not followed (a POST would come back as a GET, and the key is not sent to another origin); use --base-url https://127.0.0.1:1'
    expect(JSON.parse(redirected.stdout).scenarios.map((scenario: { status: string; error: string }) => [scenario.status, scenario.error])).toEqual([
      ['failed', message],
      ['skipped', 'not run: the run stopped when loan-flow could not reach the server'],
    ])
    expect(redirected.stderr).toBe(`sandbox: ${message}\n`)
    // --wait's one probe, then the run's first request, sent once.
    expect(moved.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /api/sandbox/openapi.json', 'GET /api/sandbox/state'])
  })

  it('an API key with a line break (a key file saved with CRLF) is refused before any request, without printing it whole', async () => {
    const key = 'sk_sandbox_secret_key_0123456789abcdef'
    const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', 'http://127.0.0.1:9'], { env: { SANDBOX_API_KEY: `${key}\r` } })
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe('sandbox: SANDBOX_API_KEY holds a space, line break or other character a key cannot have (a key file saved with CRLF line ends, or a trailing newline?): "sk_sandbox_s..."\n')
    const bearer = await runCli(['run', 'loan-flow', '--base-url', 'http://127.0.0.1:9', '--api-key', `Bearer ${key}`])
    expect(bearer.code).toBe(2)
    expect(bearer.stderr).toBe('sandbox: --api-key must be a sandbox key (sk_sandbox_...), got "Bearer sk_sa..." (the key alone: sandbox sends "Authorization: Bearer KEY" itself)\n')
  })
})
