import { Redis } from 'ioredis'
import { describe, expect, it, vi } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

const testRedis = useTestRedis()
const otherServer = JSON.stringify({ token: 't', pid: 4242, host: 'build-agent-7', started_at: 'now' })

/**
 * An owning storage that wrote a = "one"; then its lease lapses and redis stops (SIGSTOP) while
 * two renewals fall due and a write checks the lease, so all three wait on redis at once, as on a
 * server whose redis was paused for longer than the lease. `meanwhile` changes redis before the
 * pause; the write's outcome, the lines the storage told and a client beside it go to `check`.
 */
async function pauseWithRenewalsWaiting(
  meanwhile: (raw: Redis) => Promise<unknown>,
  check: (context: { write: Promise<unknown>; told: () => string[]; raw: Redis }) => Promise<void>,
) {
  const redis = await testRedis()
  await redis.flush()
  const raw = new Redis(redis.port, '127.0.0.1')
  // Only the lease's renewal timer and the wall clock are faked: the redis client keeps its own
  // timers (its 5 s command timeout), so nothing waits long on a real clock.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] })
  const messages: string[] = []
  const storage = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true, onStatus: (message) => messages.push(message) })
  const atStart = messages.length
  try {
    await storage.setItem('a', 'one')
    await meanwhile(raw)
    redis.pause()
    vi.advanceTimersByTime(12_000)
    const write = storage.setItem('a', 'two')
    // Told apart from the answer: a rejection must not go unhandled while redis is stopped.
    write.catch(() => {})
    redis.resume()
    await check({ write, told: () => messages.slice(atStart), raw })
  } finally {
    redis.resume()
    await storage.dispose()
    vi.useRealTimers()
    await raw.quit()
  }
}

describe('redis lease after a pause of redis', () => {
  it.skipIf(!hasRedis)('takes its lapsed lease back once, and never reads it back as another server\'s, when renewals wait at once', () =>
    pauseWithRenewalsWaiting((raw) => raw.pexpire('sandbox:owner', 1), async ({ write, told, raw }) => {
      await write
      expect(told()).toEqual([])
      expect(JSON.parse((await raw.get('sandbox:owner'))!).pid).toBe(process.pid)
      expect(await raw.get('sandbox:owner:last')).toBe(await raw.get('sandbox:owner'))
      expect(await raw.get('sandbox:a')).toBe('two')
    }))

  it.skipIf(!hasRedis)('still stops once another server holds the lease, and says so once', () =>
    pauseWithRenewalsWaiting((raw) => raw.set('sandbox:owner', otherServer), async ({ write, told, raw }) => {
      await expect(write).rejects.toThrow('is now used by another sandbox server (pid 4242 on build-agent-7, since now)')
      expect(told()).toHaveLength(1)
      expect(told()[0]).toContain('another sandbox server (pid 4242 on build-agent-7, since now) took this database over')
      expect(await raw.get('sandbox:owner')).toBe(otherServer)
      expect(await raw.get('sandbox:a')).toBe('one')
    }))

  it.skipIf(!hasRedis)('still does not take it back once another server held it in between, and says so once', () =>
    pauseWithRenewalsWaiting(async (raw) => {
      await raw.del('sandbox:owner')
      await raw.set('sandbox:owner:last', otherServer)
    }, async ({ write, told, raw }) => {
      await expect(write).rejects.toThrow('is now used by another sandbox server')
      expect(told()).toHaveLength(1)
      expect(told()[0]).toContain('used this database while this one was paused')
      expect(await raw.get('sandbox:owner')).toBeNull()
      expect(await raw.get('sandbox:a')).toBe('one')
    }))
})
