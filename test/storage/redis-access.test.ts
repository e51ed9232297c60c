import { join } from 'node:path'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createSandboxStorage, StorageError } from '../../src/storage/index.js'
import { REDIS_ACL_RULE } from '../../src/storage/redis-advice.js'
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

  it('fails at start, with the ACL rule to grant, for a user that may not use sandbox:* keys or EVAL; serves with that rule', () => withAdmin(async (admin, port) => {
    await admin.call('ACL', 'SETUSER', 'elsewhere', 'on', '>pw-1', '~cache:*', '+@all')
    await admin.call('ACL', 'SETUSER', 'noscripts', 'on', '>pw-2', '~sandbox:*', '+@all', '-@scripting')
    await admin.call('ACL', 'SETUSER', 'sandbox', 'on', '>pw-3', ...REDIS_ACL_RULE.split(' '))
    const advice = `; the URL's redis user may not do all that the sandbox needs: grant it ACL SETUSER USER ${REDIS_ACL_RULE}`
    for (const owner of [true, false]) {
      const refused = await startFailure(`redis://elsewhere:pw-1@127.0.0.1:${port}/3`, owner)
      // Redis versions word the refusal differently.
      expect(refused).toMatch(new RegExp(`^cannot use redis at redis://elsewhere:\\*\\*\\*@127\\.0\\.0\\.1:${port}/3 \\(NOPERM [^)]*key[^)]*\\)`))
      expect(refused.endsWith(advice)).toBe(true)
    }
    // Without EVAL the lease could never be renewed: a second server would start beside this one.
    const noEval = await startFailure(`redis://noscripts:pw-2@127.0.0.1:${port}/3`)
    expect(noEval).toMatch(/ \(NOPERM [^)]*'eval' command\); /)
    expect(noEval.endsWith(advice)).toBe(true)
    await admin.select(3)
    expect(await admin.exists('sandbox:owner')).toBe(0)

    const url = `redis://sandbox:pw-3@127.0.0.1:${port}/3`
    const server = await createSandboxStorage({ kind: 'redis', url, owner: true })
    await expect(createSandboxStorage({ kind: 'redis', url, owner: true })).rejects.toThrow('is in use by another sandbox server')
    const tool = await createSandboxStorage({ kind: 'redis', url })
    await server.setItem('session:k:default', { v: 1 })
    expect(await tool.getKeys('session')).toEqual(['session:k:default'])
    expect(await tool.getItem('session:k:default')).toEqual({ v: 1 })
    await tool.removeItem('session:k:default')
    expect(await server.hasItem('session:k:default')).toBe(false)
    await Promise.all([server.dispose(), tool.dispose()])
    expect(await admin.exists('sandbox:owner')).toBe(0)
  }))

  it('warns at a server\'s start when redis may evict its keys (allkeys-* with maxmemory), and says nothing when it cannot tell', () => withAdmin(async (admin, port) => {
    await admin.call('ACL', 'SETUSER', 'sandbox', 'on', '>pw-3', ...REDIS_ACL_RULE.split(' '))
    const messagesOf = async (url: string, owner = true) => {
      const messages: string[] = []
      const storage = await createSandboxStorage({ kind: 'redis', url, owner, onStatus: (message, up) => messages.push(`${up}: ${message}`) })
      await storage.dispose()
      return messages
    }
    const url = `redis://:${PASSWORD}@127.0.0.1:${port}/5`
    try {
      await admin.config('SET', 'maxmemory', '100mb')
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru')
      expect(await messagesOf(url)).toEqual([`false: redis redis://:***@127.0.0.1:${port}/5 has maxmemory 104857600 bytes with maxmemory-policy allkeys-lru: once full it deletes keys of any kind, the sandbox's too, and a key whose state was deleted starts again empty (loans gone, Idempotency-Keys applied again). Give the sandbox a redis whose policy is noeviction (or volatile-*: its keys have no TTL), or one without maxmemory`])
      // A tool's short run, and a user that may not read the config (as on managed redis): silent.
      expect(await messagesOf(url, false)).toEqual([])
      expect(await messagesOf(`redis://sandbox:pw-3@127.0.0.1:${port}/5`)).toEqual([])
      await admin.config('SET', 'maxmemory-policy', 'volatile-lru')
      expect(await messagesOf(url)).toEqual([])
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lfu')
      await admin.config('SET', 'maxmemory', '0')
      expect(await messagesOf(url)).toEqual([])
    } finally {
      await admin.config('SET', 'maxmemory', '0')
      await admin.config('SET', 'maxmemory-policy', 'noeviction')
    }
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
