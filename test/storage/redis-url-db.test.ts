import { describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

const testRedis = useTestRedis()

describe.skipIf(!hasRedis)('a redis URL that names ?db= more than once', () => {
  it('is refused, rather than the start checking the first while the client selects the last', async () => {
    const redis = await testRedis()
    const base = redis.url.replace(/\/0$/, '/')
    // 99 is out of range: the client's own SELECT failed and it went on in database 0 unchecked.
    for (const url of [`${base}?db=0&db=99`, `${base}?db=2&db=3`]) {
      const outcome = await createSandboxStorage({ kind: 'redis', url }).then(async (storage) => {
        await storage.dispose()
        return 'taken'
      }, (error: Error) => error.message)
      expect(outcome).toBe(`${url}: ?db= is given more than once: give one`)
    }
  })
})
