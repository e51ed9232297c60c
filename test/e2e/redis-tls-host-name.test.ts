import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'
import { adviseOn } from '../../src/storage/redis-advice.js'

afterEach(() => killAll())

const TLS = join(import.meta.dirname, '../fixtures/tls')
const tlsRedis = useTestRedis({ tls: { cert: join(TLS, 'cert.pem'), key: join(TLS, 'key.pem') } })

describe('rediss:// with a certificate that does not fit, or is not trusted although NODE_EXTRA_CA_CERTS is set', () => {
  it.skipIf(!hasRedis)('says the certificate is for another host name, not to trust its CA (which is trusted already)', async () => {
    const redis = await tlsRedis()
    // The fixture's certificate names 127.0.0.1 only.
    const url = `rediss://localhost:${redis.port}/0`
    const result = await runCli(['logs', '--storage', url], { env: { NODE_EXTRA_CA_CERTS: join(TLS, 'cert.pem') } })
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(`sandbox: cannot use redis at ${url} (ERR_TLS_CERT_ALTNAME_INVALID); its TLS certificate is for another host name: use in the URL a name (or IP address) that the certificate lists\n`)
  })

  it('says an expired certificate has expired', () => {
    expect(adviseOn('CERT_HAS_EXPIRED', true, true)).toBe('its TLS certificate has expired: renew it on the redis server (or check this machine\'s clock)')
  })

  it.skipIf(!hasRedis)('says to add the CA to the NODE_EXTRA_CA_CERTS file already set (a CI image\'s bundle), not to set it', async () => {
    const redis = await tlsRedis()
    const other = join(TLS, 'proxied-cert.pem')
    const result = await runCli(['logs', '--storage', redis.url], { env: { NODE_EXTRA_CA_CERTS: other } })
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(`sandbox: cannot use redis at ${redis.url} (DEPTH_ZERO_SELF_SIGNED_CERT); its TLS certificate is not trusted here, NODE_EXTRA_CA_CERTS=${other} included: add its CA to that file (one file, which may hold several CAs), or fix the path if Node warned at start that it could not load it\n`)
  })
})
