import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'
import { adviseOn } from '../../src/storage/redis-advice.js'

afterEach(() => killAll())

const TLS = join(import.meta.dirname, '../fixtures/tls')
const tlsRedis = useTestRedis({ tls: { cert: join(TLS, 'cert.pem'), key: join(TLS, 'key.pem') } })

describe('rediss:// with a certificate the client trusts but that does not fit', () => {
  it.skipIf(!hasRedis)('says the certificate is for another host name, not to trust its CA (which is trusted already)', async () => {
    const redis = await tlsRedis()
    // The fixture's certificate names 127.0.0.1 only.
    const url = `rediss://localhost:${redis.port}/0`
    const result = await runCli(['logs', '--storage', url], { env: { NODE_EXTRA_CA_CERTS: join(TLS, 'cert.pem') } })
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(`sandbox: cannot use redis at ${url} (ERR_TLS_CERT_ALTNAME_INVALID); its TLS certificate is for another host name: use in the URL a name (or IP address) that the certificate lists\n`)
  })

  it('says an expired certificate has expired', () => {
    expect(adviseOn('CERT_HAS_EXPIRED', true, true)).toBe('its TLS certificate has expired: renew it on the redis server')
  })
})
