import { describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

const testRedis = useTestRedis()

describe.skipIf(!hasRedis)('a rediss:// URL written in capitals', () => {
  it('still speaks TLS: a plain redis port is refused rather than sent the password in clear text', { timeout: 30_000 }, async () => {
    const redis = await testRedis()
    for (const scheme of ['REDISS', 'Rediss']) {
      const url = redis.url.replace(/^redis:/, `${scheme}:`)
      const outcome = await createSandboxStorage({ kind: 'redis', url }).then(
        async (storage) => {
          await storage.dispose()
          return 'connected in plain text'
        },
        (error: Error) => error.message,
      )
      expect(outcome).toMatch(/^cannot use redis at rediss:\/\/127\.0\.0\.1:\d+\/0 \(/)
    }
  })

  it('is refused with a ?tls= in its query, which the client lets override the scheme (an empty one: plain text)', async () => {
    const redis = await testRedis()
    const url = `${redis.url.replace(/^redis:/, 'rediss:')}?tls=`
    const outcome = await createSandboxStorage({ kind: 'redis', url }).then(async (storage) => {
      await storage.dispose()
      return 'connected in plain text'
    }, (error: Error) => error.message)
    expect(outcome).toBe(`${url}: TLS is chosen by the scheme, rediss:// or redis://, not by ?tls=`)
  })
})
