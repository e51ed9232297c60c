import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

const testRedis = useTestRedis()

describe('a redis that comes back without the sandbox\'s keys', () => {
  it.skipIf(!hasRedis)('says that its data is gone once the connection is back, rather than only that it is back', async () => {
    const redis = await testRedis()
    await redis.flush()
    const messages: string[] = []
    const storage = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true, onStatus: (message) => messages.push(message) })
    try {
      await storage.setItem('a', 'one')
      // Started again with no persistence (`--save ''`, a container without a volume): empty.
      await redis.restart()
      await expect.poll(() => messages.some((message) => message.includes('keys are gone')), { timeout: 10_000 }).toBe(true)
      expect(messages.at(-1)).toBe(`redis ${redis.url}: the sandbox's keys are gone from this database (redis restarted without persistence, or flushed or evicted them): keys whose state this server does not hold in memory start again from an empty state, and sandbox logs lacks the requests before`)
      expect(await storage.getItem('a')).toBeNull()
    } finally {
      await storage.dispose()
    }
  }, 20_000)

  it.skipIf(!hasRedis)('says nothing of the kind when redis kept them through the outage', async () => {
    const redis = await testRedis()
    await redis.flush()
    const messages: string[] = []
    const storage = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true, onStatus: (message) => messages.push(message) })
    try {
      // Dropped without its keys lost: the client reconnects to the same data.
      const admin = new Redis(redis.port, '127.0.0.1')
      await admin.client('KILL', 'TYPE', 'normal')
      await admin.quit()
      await expect.poll(() => messages.some((message) => message.includes('connection restored')), { timeout: 10_000 }).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(messages.filter((message) => message.includes('keys are gone'))).toEqual([])
    } finally {
      await storage.dispose()
    }
  }, 20_000)
})
