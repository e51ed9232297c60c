import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { adviseOn, shortenReason } from '../../src/storage/redis-advice.js'
import { findClosedPort } from '../helpers/receiver.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

const testRedis = useTestRedis()

describe('a redis that takes the connection but refuses what the server needs at start', () => {
  it.skipIf(!hasRedis)('says a read-only replica is one, and to give its primary, rather than to start redis', async () => {
    const redis = await testRedis()
    const admin = new Redis(redis.port, '127.0.0.1')
    // A replica of a primary that is gone: it stays read-only.
    await admin.replicaof('127.0.0.1', await findClosedPort())
    try {
      const error = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true }).catch((caught: unknown) => caught as Error)
      expect((error as Error).message).toBe(`cannot use redis at ${redis.url} (READONLY You can't write against a read only replica.); it is a read-only replica: give the URL of its primary`)
    } finally {
      await admin.replicaof('NO', 'ONE')
      await admin.quit()
    }
  })

  it('says what to do about a redis that disabled EVAL or cannot save its snapshot, and shows no Lua script', () => {
    const unknown = "ERR unknown command 'eval', with args beginning with: 'if redis.call('get', KEYS[1]) == ARGV[1] then return' '1' 'sandbox:own' "
    expect(shortenReason(unknown)).toBe("ERR unknown command 'eval'")
    expect(adviseOn(shortenReason(unknown), false, true)).toBe('it does not take EVAL (disabled or renamed), which the sandbox needs for the lease that keeps a second server off the database: use a redis that runs Lua scripts')
    const misconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk."
    expect(adviseOn(misconf, false, true)).toBe('it refuses writes until it can save its snapshot again: see its log (a full disk, a dir it may not write in), then retry')
  })

  it.skipIf(!hasRedis)('says a redis at its maxclients is full of clients, rather than to start it', async () => {
    const redis = await testRedis()
    const admin = new Redis(redis.port, '127.0.0.1')
    // The admin connection is the one client it takes.
    await admin.config('SET', 'maxclients', '1')
    try {
      const error = await createSandboxStorage({ kind: 'redis', url: redis.url }).catch((caught: unknown) => caught as Error)
      expect((error as Error).message).toBe(`cannot use redis at ${redis.url} (ERR max number of clients reached); it has as many clients as its maxclients allows: close some (CLIENT LIST shows them) or raise maxclients`)
    } finally {
      await admin.config('SET', 'maxclients', '10000')
      await admin.quit()
    }
  })
})
