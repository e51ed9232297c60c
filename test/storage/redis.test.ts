import { spawnSync } from 'node:child_process'
import { createServer } from 'node:net'
import { hostname } from 'node:os'
import { Redis } from 'ioredis'
import { describe, expect, it, vi } from 'vitest'
import { createSandboxStorage, StorageError } from '../../src/storage/index.js'
import { maskUrlPassword } from '../../src/text/url-password.js'
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
    expect(maskUrlPassword('redis://:s3cret@127.0.0.1:6379/2')).toBe('redis://:***@127.0.0.1:6379/2')
    expect(maskUrlPassword('rediss://user:s3cret@cache.example:6380')).toBe('rediss://user:***@cache.example:6380')
    expect(maskUrlPassword('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379')
    // The redis client also takes the password from the query.
    expect(maskUrlPassword('redis://127.0.0.1:6379/2?password=s3cret')).toBe('redis://127.0.0.1:6379/2?password=***')
    expect(maskUrlPassword('redis://127.0.0.1:6379?family=6&password=s3cret&db=1')).toBe('redis://127.0.0.1:6379?family=6&password=***&db=1')
  })
})

describe('redis storage', () => {
  it('fails at start with the URL (password hidden) and the reason when nothing listens, without hanging', async () => {
    const port = await findDeadPort()
    // ECONNREFUSED in the message: it failed on the refusal, not after a timeout.
    const error = await createSandboxStorage({ kind: 'redis', url: `redis://:s3cret@127.0.0.1:${port}/0`, owner: true }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(StorageError)
    expect((error as Error).message).toContain(`cannot use redis at redis://:***@127.0.0.1:${port}/0 (ECONNREFUSED); start it, or use another storage (--storage fs or memory)`)
    expect((error as Error).message).not.toContain('s3cret')
    // A tool reads what the server stored: another storage would hold nothing of it.
    const tool = await createSandboxStorage({ kind: 'redis', url: `redis://127.0.0.1:${port}/0` }).catch((caught: unknown) => caught)
    expect((tool as Error).message).toContain(`cannot use redis at redis://127.0.0.1:${port}/0 (ECONNREFUSED); start it, or check that the URL is the --storage your sandbox serve uses`)
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

  it.skipIf(!hasRedis)('refuses a database number the server does not have, instead of using database 0', async () => {
    const redis = await testRedis()
    await redis.flush()
    const url = redis.url.replace(/\/0$/, '/99')
    const error = await createSandboxStorage({ kind: 'redis', url, owner: true }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(StorageError)
    expect((error as Error).message).toBe(`cannot use redis at ${url} (ERR DB index is out of range); give a database number the server has (0-15 unless redis.conf sets \`databases\`)`)
    const raw = new Redis(redis.port, '127.0.0.1')
    expect(await raw.keys('*')).toEqual([])
    await raw.quit()
  })

  it.skipIf(!hasRedis)('uses and checks the database of ?db= as the redis client reads it, and refuses a URL that names two', async () => {
    const redis = await testRedis()
    await redis.flush()
    const base = redis.url.replace(/\/0$/, '')
    const storage = await createSandboxStorage({ kind: 'redis', url: `${base}?db=4`, owner: true })
    await storage.setItem('a', 'one')
    const raw = new Redis(redis.port, '127.0.0.1', { db: 4 })
    expect(await raw.get('sandbox:a')).toBe('one')
    await storage.dispose()
    await raw.quit()
    await expect(createSandboxStorage({ kind: 'redis', url: `${base}?db=99`, owner: true })).rejects.toThrow(`cannot use redis at ${base}?db=99 (ERR DB index is out of range)`)
    await expect(createSandboxStorage({ kind: 'redis', url: `${base}/5?db=3` })).rejects.toThrow(`${base}/5?db=3 names database 5 in its path and 3 in ?db=: give one`)
    await expect(createSandboxStorage({ kind: 'redis', url: `${base}?db=two` })).rejects.toThrow('?db= must be a database number such as 0, not two')
  })

  it.skipIf(!hasRedis)('lists every key of a prefix across many scan pages, and none of another', async () => {
    const redis = await testRedis()
    await redis.flush()
    const raw = new Redis(redis.port, '127.0.0.1')
    const pipeline = raw.pipeline()
    for (let i = 0; i < 2_500; i++) pipeline.set(`sandbox:session:k${i}:default`, '{}')
    for (let i = 0; i < 2_500; i++) pipeline.set(`sandbox:idem:k${i}:default:1`, '{}')
    pipeline.set('sandbox:session-like:k0', '{}')
    await pipeline.exec()
    const storage = await createSandboxStorage({ kind: 'redis', url: redis.url })
    const keys = await storage.getKeys('session')
    expect(keys).toHaveLength(2_500)
    expect(new Set(keys).size).toBe(2_500)
    expect(keys.every((key) => /^session:k\d+:default$/.test(key))).toBe(true)
    await storage.dispose()
    await raw.quit()
  })

  it.skipIf(!hasRedis)('fails fast while the server is down, says so once, and works again once it is back', async () => {
    const redis = await testRedis()
    await redis.flush()
    const messages: string[] = []
    const storage = await createSandboxStorage({ kind: 'redis', url: redis.url, onStatus: (message) => messages.push(message) })
    await storage.setItem('a', 'one')
    await redis.kill()
    await expect.poll(() => messages.length).toBe(1)
    expect(messages[0]).toMatch(/^redis redis:\/\/127\.0\.0\.1:\d+\/0: connection lost.*; reading again once it is back$/)
    // Refused at once as not connected, not queued until a command timeout; the batch read of
    // sandbox logs says so too, rather than the client's own words.
    for (const call of [() => storage.getItem('a'), () => storage.getItems(['a']), () => storage.setItem('a', 'two')]) {
      await expect(call()).rejects.toThrow(/is not connected .*retrying in the background/)
    }
    await redis.restart()
    await expect.poll(() => messages.length, { timeout: 5_000 }).toBe(2)
    expect(messages[1]).toMatch(/connection restored$/)
    // The restarted server is empty (no persistence in tests): what matters is that it is used again.
    await storage.setItem('a', 'three')
    expect(await storage.getItem('a')).toBe('three')
    await storage.dispose()
    expect(messages).toHaveLength(2)
  })

  it.skipIf(!hasRedis)('lets one server at a time own a database, takes over the lease of a dead one, and lets tools in beside it', async () => {
    const redis = await testRedis()
    await redis.flush()
    const raw = new Redis(redis.port, '127.0.0.1')
    const first = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true })
    const lease = JSON.parse((await raw.get('sandbox:owner'))!)
    expect(lease).toMatchObject({ pid: process.pid, host: hostname() })
    expect(await raw.pttl('sandbox:owner')).toBeGreaterThan(10_000)
    const refused = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(StorageError)
    expect((refused as Error).message).toBe(`redis ${redis.url} is in use by another sandbox server (pid ${process.pid}, since ${lease.started_at}); stop it, or give this one another database (the number after the port in the URL). A server that died frees it within 15 s`)
    // Another database of the same server is another sandbox; a tool needs no lease.
    const other = await createSandboxStorage({ kind: 'redis', url: redis.url.replace(/\/0$/, '/1'), owner: true })
    const tool = await createSandboxStorage({ kind: 'redis', url: redis.url })
    await first.setItem('session:k:default', { v: 1 })
    expect(await tool.getItem('session:k:default')).toEqual({ v: 1 })
    await Promise.all([first.dispose(), other.dispose(), tool.dispose()])
    expect(await raw.exists('sandbox:owner')).toBe(0)

    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
    await raw.set('sandbox:owner', JSON.stringify({ token: 't', pid: Number(dead.stdout), host: hostname(), started_at: 'then' }), 'PX', 15_000)
    const second = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true })
    expect(JSON.parse((await raw.get('sandbox:owner'))!).pid).toBe(process.pid)
    await second.dispose()
    await raw.set('sandbox:owner', JSON.stringify({ token: 'before-restart', pid: process.pid, host: hostname(), started_at: 'then' }), 'PX', 15_000)
    const third = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true })
    expect(JSON.parse((await raw.get('sandbox:owner'))!).token).not.toBe('before-restart')
    await third.dispose()
    await raw.set('sandbox:owner', JSON.stringify({ token: 't', pid: Number(dead.stdout), host: 'build-agent-7', started_at: 'then' }), 'PX', 15_000)
    await expect(createSandboxStorage({ kind: 'redis', url: redis.url, owner: true })).rejects.toThrow(`in use by another sandbox server (pid ${dead.stdout} on build-agent-7, since then)`)
    await raw.quit()
  })

  /** An owning storage that wrote a = "one", on a fresh database, with a client of its own beside it. */
  async function withOwningStorage(check: (context: { raw: Redis; storage: Awaited<ReturnType<typeof createSandboxStorage>>; messages: string[]; url: string }) => Promise<void>, afterDispose?: (raw: Redis) => Promise<void>) {
    const redis = await testRedis()
    await redis.flush()
    const raw = new Redis(redis.port, '127.0.0.1')
    const messages: string[] = []
    const storage = await createSandboxStorage({ kind: 'redis', url: redis.url, owner: true, onStatus: (message) => messages.push(message) })
    await storage.setItem('a', 'one')
    try {
      await check({ raw, storage, messages, url: redis.url })
    } finally {
      vi.useRealTimers()
      await storage.dispose()
    }
    await afterDispose?.(raw)
    await raw.quit()
  }
  const otherServer = JSON.stringify({ token: 't', pid: 4242, host: 'build-agent-7', started_at: 'now' })

  it.skipIf(!hasRedis)('stops using the database once another server has taken its lease over', () => withOwningStorage(async ({ raw, storage, messages, url }) => {
    // What a second server does once this one's lease lapsed during a long pause: it holds it now.
    await raw.set('sandbox:owner', otherServer)
    await raw.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes')
    await expect.poll(() => messages.find((message) => message.includes('took this database over')), { timeout: 5_000 }).toBeDefined()
    expect(messages.at(-1)).toBe(`redis ${url}: another sandbox server (pid 4242 on build-agent-7, since now) took this database over; this server answers 500 SANDBOX_API_KEY_DATABASE_REQUIRED from now on. Stop one of them`)
    await expect(storage.setItem('a', 'two')).rejects.toThrow('is now used by another sandbox server (pid 4242 on build-agent-7, since now)')
    expect(await raw.get('sandbox:a')).toBe('one')
  }, async (raw) => {
    // Its lease is not its own to delete.
    expect(JSON.parse((await raw.get('sandbox:owner'))!).pid).toBe(4242)
  }))

  it.skipIf(!hasRedis)('checks its lease before writing after a pause, and writes nothing once another server took it over meanwhile', () => withOwningStorage(async ({ raw, storage, messages }) => {
    // Only the wall clock is faked: it jumps as after a process stopped (Ctrl+Z) or a laptop
    // asleep, while no renewal ran.
    vi.useFakeTimers({ toFake: ['Date'] })
    await raw.pexpire('sandbox:owner', 200)
    vi.setSystemTime(Date.now() + 12_000)
    await new Promise((resolve) => setTimeout(resolve, 300))
    // Lapsed but free: taken again before the write.
    await storage.setItem('b', 'kept')
    expect(JSON.parse((await raw.get('sandbox:owner'))!).pid).toBe(process.pid)
    vi.setSystemTime(Date.now() + 20_000)
    await raw.set('sandbox:owner', otherServer)
    await expect(storage.setItem('a', 'two')).rejects.toThrow('is now used by another sandbox server (pid 4242 on build-agent-7, since now)')
    expect(await raw.get('sandbox:a')).toBe('one')
    expect(messages.at(-1)).toContain('took this database over')
  }))

  it.skipIf(!hasRedis)('does not take its lease back after a pause in which another server held it and stopped', () => withOwningStorage(async ({ raw, storage, messages }) => {
    vi.useFakeTimers({ toFake: ['Date'] })
    // Meanwhile: the lease lapsed, another server took it, changed 'a', and stopped.
    await raw.del('sandbox:owner')
    await raw.set('sandbox:owner:last', otherServer)
    await raw.set('sandbox:a', 'theirs')
    vi.setSystemTime(Date.now() + 20_000)
    await expect(storage.setItem('a', 'mine')).rejects.toThrow('is now used by another sandbox server')
    expect(await raw.get('sandbox:a')).toBe('theirs')
    expect(messages.at(-1)).toContain('used this database while this one was paused')
    expect(await raw.get('sandbox:owner')).toBeNull()
  }))
})
