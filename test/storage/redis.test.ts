import { createServer } from 'node:net'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createSandboxStorage, StorageError } from '../../src/storage/index.js'
import { maskRedisUrl } from '../../src/storage/redis-url.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

const testRedis = useTestRedis()

/** A loopback port nobody listens on. */
function findDeadPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

describe('redis URLs in messages', () => {
  it('hides the password and keeps the rest', () => {
    expect(maskRedisUrl('redis://:s3cret@127.0.0.1:6379/2')).toBe('redis://:***@127.0.0.1:6379/2')
    expect(maskRedisUrl('rediss://user:s3cret@cache.example:6380')).toBe('rediss://user:***@cache.example:6380')
    expect(maskRedisUrl('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379')
  })
})

describe('redis storage', () => {
  it('fails at start with the URL (password hidden) and the reason when nothing listens, without hanging', async () => {
    const port = await findDeadPort()
    const started = Date.now()
    const error = await createSandboxStorage({ kind: 'redis', url: `redis://:s3cret@127.0.0.1:${port}/0` }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(StorageError)
    expect((error as Error).message).toContain(`cannot reach redis at redis://:***@127.0.0.1:${port}/0 (ECONNREFUSED)`)
    expect((error as Error).message).not.toContain('s3cret')
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it.skipIf(!hasRedis)('keeps every key under sandbox: in the database the URL names', async () => {
    const redis = await testRedis()
    await redis.flush()
    const storage = await createSandboxStorage({ kind: 'redis', url: redis.url.replace(/\/0$/, '/3') })
    await storage.setItem('session:k1:default', { a: 1 })
    const raw = new Redis(redis.port, '127.0.0.1', { db: 3 })
    expect(await raw.keys('*')).toEqual(['sandbox:session:k1:default'])
    expect(JSON.parse((await raw.get('sandbox:session:k1:default'))!)).toEqual({ a: 1 })
    await raw.select(0)
    expect(await raw.keys('*')).toEqual([])
    await raw.quit()
    await storage.dispose()
  })

  it.skipIf(!hasRedis)('fails fast while the server is down, says so once, and works again once it is back', async () => {
    const redis = await testRedis()
    await redis.flush()
    const messages: string[] = []
    const storage = await createSandboxStorage({ kind: 'redis', url: redis.url, onStatus: (message) => messages.push(message) })
    await storage.setItem('a', 'one')
    await redis.kill()
    await expect.poll(() => messages.length).toBe(1)
    expect(messages[0]).toMatch(/^redis redis:\/\/127\.0\.0\.1:\d+\/0: connection lost.*500 SANDBOX_API_KEY_DATABASE_REQUIRED/)
    const started = Date.now()
    await expect(storage.getItem('a')).rejects.toThrow()
    await expect(storage.setItem('a', 'two')).rejects.toThrow()
    expect(Date.now() - started).toBeLessThan(1_000)
    await redis.restart()
    await expect.poll(() => messages.length, { timeout: 5_000 }).toBe(2)
    expect(messages[1]).toMatch(/connection restored$/)
    // The restarted server is empty (no persistence in tests): what matters is that it is used again.
    await storage.setItem('a', 'three')
    expect(await storage.getItem('a')).toBe('three')
    await storage.dispose()
    expect(messages).toHaveLength(2)
  })
})
