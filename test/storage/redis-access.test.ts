import { join } from 'node:path'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createSandboxStorage, StorageError } from '../../src/storage/index.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

// A team's shared redis: a password for the default user, and ACL users beside it.
const PASSWORD = 'admin-pw-4821'
const sharedRedis = useTestRedis({ password: PASSWORD })
const TLS = join(import.meta.dirname, '../fixtures/tls')
const tlsRedis = useTestRedis({ tls: { cert: join(TLS, 'cert.pem'), key: join(TLS, 'key.pem') } })

/** The message a start with URL fails with (and that it fails with a StorageError). */
async function startFailure(url: string, owner = true): Promise<string> {
  const error = await createSandboxStorage({ kind: 'redis', url, owner }).then(async (storage) => {
    await storage.dispose()
    return undefined
  }, (caught: unknown) => caught)
  expect(error).toBeInstanceOf(StorageError)
  return (error as Error).message
}

/** Runs CHECK with a client of the shared redis logged in as its default user. */
async function withAdmin<T>(check: (admin: Redis, port: number) => Promise<T>): Promise<T> {
  const redis = await sharedRedis()
  const admin = new Redis(redis.port, '127.0.0.1', { password: PASSWORD })
  try {
    return await check(admin, redis.port)
  } finally {
    await admin.quit()
  }
}

describe.skipIf(!hasRedis)('redis storage on a shared redis with passwords and ACL users', () => {
  it('names a wrong password as wrong (not as missing) whatever the database number, and never prints it', () => withAdmin(async (admin, port) => {
    await admin.call('ACL', 'SETUSER', 'team', 'on', '>team-pw-77', 'allkeys', '+@all')
    for (const db of [0, 2]) {
      const wrongUser = await startFailure(`redis://team:not-it-91@127.0.0.1:${port}/${db}`)
      expect(wrongUser).toBe(`cannot use redis at redis://team:***@127.0.0.1:${port}/${db} (WRONGPASS invalid username-password pair or user is disabled.); check the user and password in the URL`)
      const wrongDefault = await startFailure(`redis://:not-it-91@127.0.0.1:${port}/${db}`)
      expect(wrongDefault).toContain('(WRONGPASS')
      expect(wrongUser + wrongDefault).not.toContain('not-it-91')
    }
    const missing = await startFailure(`redis://127.0.0.1:${port}/2`)
    expect(missing).toBe(`cannot use redis at redis://127.0.0.1:${port}/2 (NOAUTH Authentication required.); it asks for a password: put it in the URL, redis://:PASSWORD@HOST:PORT/DB (redis://USER:PASSWORD@HOST:PORT/DB for an ACL user)`)
    const storage = await createSandboxStorage({ kind: 'redis', url: `redis://team:team-pw-77@127.0.0.1:${port}/2`, owner: true })
    await storage.setItem('session:k:default', { v: 1 })
    await storage.dispose()
    await admin.select(2)
    expect(await admin.get('sandbox:session:k:default')).toBe('{"v":1}')
  }))

  it('says to switch between redis:// and rediss:// when the port speaks the other, within the connect timeout', async () => {
    const plain = await sharedRedis()
    const started = Date.now()
    expect(await startFailure(`rediss://127.0.0.1:${plain.port}/0`)).toBe(`cannot use redis at rediss://127.0.0.1:${plain.port}/0 (ETIMEDOUT); no TLS answer: if that port serves plain redis, use redis:// instead of rediss://; otherwise check the host and port`)
    expect(Date.now() - started).toBeLessThan(4_500)
    const tls = await tlsRedis()
    expect(await startFailure(`redis://127.0.0.1:${tls.port}/0`)).toBe(`cannot use redis at redis://127.0.0.1:${tls.port}/0 (ECONNRESET); it closed the connection at once: if that port speaks TLS, use rediss:// instead of redis://`)
  })
})
