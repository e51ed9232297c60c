import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { useProxiedSandbox } from '../helpers/reverse-proxy.js'

// A run whose NODE_EXTRA_CA_CERTS is set (CI images set it to the system bundle), yet the
// server's certificate is still not trusted: "give its CA with NODE_EXTRA_CA_CERTS" would send the
// reader round in a circle, or have them replace a file other tools need.

const OTHER_CA = join(import.meta.dirname, '../fixtures/tls/proxied-cert.pem')
const CA = join(import.meta.dirname, '../fixtures/tls/cert.pem')
const upstreamSandbox = useProxiedSandbox()
afterEach(() => {
  killAll()
})

describe('sandbox run with NODE_EXTRA_CA_CERTS that does not trust the server', () => {
  it('says to add the CA to the file set, or to fix its path, for a file of another CA and a missing one', async () => {
    const tls = await upstreamSandbox.proxy({ tls: true })
    for (const file of [OTHER_CA, join(import.meta.dirname, 'no-such-ca.pem')]) {
      const { code, stderr } = await runCli(['run', 'loan-flow', '--base-url', tls.url], { env: { NODE_EXTRA_CA_CERTS: file } })
      expect(code).toBe(2)
      expect(stderr.trimEnd().split('\n').at(-1)).toBe(`sandbox: cannot reach ${tls.url}/api/sandbox/state (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate); its TLS certificate is not trusted here, NODE_EXTRA_CA_CERTS=${file} included: add its CA to that file (one file, which may hold several CAs), or fix the path if Node warned at start that it could not load it`)
    }
    const trusted = await runCli(['run', 'loan-flow', '--base-url', tls.url], { env: { NODE_EXTRA_CA_CERTS: CA } })
    expect([trusted.code, trusted.stdout.trimEnd().split('\n').at(-1)]).toEqual([0, '1 passed, 0 failed'])
  })
})
