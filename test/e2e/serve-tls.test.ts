import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli, startServe } from '../helpers/cli.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

// `sandbox serve` answering https, for partner code that refuses plain http base URLs.

const TLS = join(import.meta.dirname, '../fixtures/tls')
const CERT = join(TLS, 'cert.pem')
const KEY = join(TLS, 'key.pem')

afterEach(() => killAll())
const tempDir = useTempDirs('sandbox-serve-tls')

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1)

describe('sandbox serve --tls-cert --tls-key', () => {
  it('serves https, which a client trusting the certificate walks a loan against, from the flags or the environment', async () => {
    for (const [args, env] of [[['--tls-cert', CERT, '--tls-key', KEY], {}], [[], { SANDBOX_TLS_CERT: CERT, SANDBOX_TLS_KEY: KEY }]] as const) {
      const server = await startServe(['--storage', 'memory', '--port', '0', ...args], { env })
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
      const run = await runCli(['run', 'loan-flow', '--base-url', server.url], { env: { NODE_EXTRA_CA_CERTS: CERT } })
      expect([run.code, lastLine(run.stdout)]).toEqual([0, '1 passed, 0 failed'])
      // Plain HTTP to the https port is told where to go, not reset, and stops the run as a setup
      // problem (exit 2), not as the API failing every scenario.
      const plainUrl = server.url.replace('https:', 'http:')
      const plain = await runCli(['run', '--base-url', plainUrl])
      expect(plain.code).toBe(2)
      const stop = `cannot reach ${plainUrl}: the server there answers https only (400 to plain HTTP); use https:// rather than http:// (${server.url})`
      // Under the failed step's line, as any failure of a step is.
      expect(plain.stdout).toMatch(/^ {2}✗ \S+ +\/api\/sandbox\/\S+ 400 /m)
      expect(plain.stdout).toContain(`\n      ${stop}\n`)
      expect(lastLine(plain.stdout)).toBe('0 passed, 1 failed, 17 skipped')
      expect(plain.stderr).toBe(`sandbox: ${stop}\n`)
      await server.stop()
    }
  })

  // OpenSSL knows only GET, POST, HEAD and PUT as HTTP; the API's DELETE got a reset connection.
  it('answers a plain-HTTP DELETE to the https port with the same 400 as a GET, naming the https:// URL', async () => {
    const server = await startServe(['--storage', 'memory', '--port', '0', '--tls-cert', CERT, '--tls-key', KEY])
    const plainUrl = server.url.replace('https:', 'http:')
    for (const method of ['DELETE', 'GET']) {
      const response = await fetch(`${plainUrl}/api/sandbox/webhooks`, { method, headers: { authorization: 'Bearer sk_sandbox_plain_http_delete_1' } })
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ error_code: 'INVALID_REQUEST', error: `This server answers https only: send the request to ${server.url}.` })
    }
  })

  it('gives the https URL in the --json-logs ready line', async () => {
    const server = await startServe(['--storage', 'memory', '--port', '0', '--json-logs', '--tls-cert', CERT, '--tls-key', KEY])
    expect(server.url).toMatch(/^https:\/\//)
    expect(server.output()).toContain(`"event":"ready","url":"${server.url}"`)
  })

  it.each([
    [['--tls-cert', CERT], 'sandbox: --tls-cert and --tls-key go together: give --tls-key (its private key) too, or neither for plain http\n'],
    [['--tls-key', KEY], 'sandbox: --tls-cert and --tls-key go together: give --tls-cert (the certificate) too, or neither for plain http\n'],
    [['--tls-cert', join(TLS, 'missing.pem'), '--tls-key', KEY], `sandbox: cannot read --tls-cert ${join(TLS, 'missing.pem')}: no such file\n`],
    [['--tls-cert', CERT, '--tls-key', join(TLS, 'proxied-key.pem')], `sandbox: --tls-cert ${CERT} and --tls-key ${join(TLS, 'proxied-key.pem')}: the private key does not belong to the certificate\n`],
    [['--tls-cert', KEY, '--tls-key', CERT], `sandbox: --tls-cert ${KEY} and --tls-key ${CERT}: the certificate and the private key are swapped: the certificate's file holds a private key, and the key's a certificate\n`],
  ])('exits 2 before listening on %j', async (args, stderr) => {
    const result = await runCli(['serve', '--storage', 'memory', '--port', '0', ...args])
    expect([result.code, result.stderr, result.stdout]).toEqual([2, stderr, ''])
  })

  it('a chain file with the server\'s certificate after another: exit 2 saying the order, not that the key is another certificate\'s', async () => {
    const chain = join(await tempDir(), 'chain.pem')
    await writeFile(chain, (await readFile(join(TLS, 'proxied-cert.pem'), 'utf8')) + (await readFile(CERT, 'utf8')))
    const result = await runCli(['serve', '--storage', 'memory', '--port', '0', '--tls-cert', chain, '--tls-key', KEY])
    expect([result.code, result.stderr, result.stdout]).toEqual([2, `sandbox: --tls-cert ${chain} and --tls-key ${KEY}: the private key belongs to certificate 2 of 2 in the certificate's file: the server's own certificate must come first, then the certificates of its chain\n`, ''])
  })
})
