import { createServer } from 'node:net'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { killAll, MANY_RUNS_TIMEOUT_MS, runCli, startServe, waitUntil } from '../helpers/cli.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterEach(() => killAll())

const testRedis = useTestRedis()
const TLS = join(import.meta.dirname, '../fixtures/tls')
const passwordRedis = useTestRedis({ password: 'pw-123' })
const tlsRedis = useTestRedis({ tls: { cert: join(TLS, 'cert.pem'), key: join(TLS, 'key.pem') } })
const tempDir = useTempDirs('sandbox-redis-e2e')

function post(url: string, key: string, path: string, body: unknown, idempotencyKey: string) {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body: JSON.stringify(body),
  })
}

async function sessionKeys(port: number): Promise<string[]> {
  const client = new Redis(port, '127.0.0.1')
  const keys = await client.keys('sandbox:session:*')
  await client.quit()
  return keys
}

/** A loopback port nobody listens on. */
function findDeadPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

describe('sandbox serve on redis storage', () => {
  it('exits 2 with the URL (password hidden) and the reason when redis cannot be reached', async () => {
    const port = await findDeadPort()
    const result = await runCli(['serve', '--port', '0', '--storage', `redis://:s3cret@127.0.0.1:${port}/0`])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`cannot use redis at redis://:***@127.0.0.1:${port}/0 (ECONNREFUSED); start it, or use another storage (--storage fs or memory)`)
    expect(result.stderr + result.stdout).not.toContain('s3cret')
    expect(result.stderr).not.toMatch(/\n\s+at /)
    const logs = await runCli(['logs', '--storage', `redis://127.0.0.1:${port}/0`])
    expect(logs.code).toBe(2)
    expect(logs.stderr).toContain('start it, or check that the URL is the --storage your sandbox serve uses')
    const typo = await runCli(['serve', '--port', '0', '--storage', 'redis://127.0.0.1:6379/sessions'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('the path must be a database number')
  })

  it('keys reset leaves the keys file as it was when the redis holding the old session cannot be used', async () => {
    const dir = await tempDir()
    const keysFile = join(dir, 'keys.json')
    const key = (await runCli(['keys', 'create', '--keys', keysFile])).stdout.trim()
    const before = await readFile(keysFile, 'utf8')
    const port = await findDeadPort()
    const reset = await runCli(['keys', 'reset', key, '--keys', keysFile, '--storage', `redis://:s3cret@127.0.0.1:${port}/0`])
    expect(reset.code).toBe(2)
    expect(reset.stderr).toContain(`cannot use redis at redis://:***@127.0.0.1:${port}/0 (ECONNREFUSED)`)
    // Otherwise the key would have a new session and its old one's data would stay in redis for good.
    expect(await readFile(keysFile, 'utf8')).toBe(before)
  })

  it.skipIf(!hasRedis)('keeps state across a restart; logs and keys reset work on it', async () => {
    const redis = await testRedis()
    await redis.flush()
    const dir = await tempDir()
    const keysFile = join(dir, 'keys.json')
    const key = (await runCli(['keys', 'create', '--keys', keysFile])).stdout.trim()
    const first = await startServe(['--port', '0', '--quiet', '--storage', redis.url, '--keys', keysFile])
    expect(first.output()).toContain(`sandbox ready: ${first.url} (storage redis ${redis.url}, keys ${keysFile}`)
    const created = await post(first.url, key, '/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }, 'persist-1')
    const loan = (await created.json()).activeLoans[0]
    expect(await first.stop()).toBe(0)

    const second = await startServe(['--port', '0', '--quiet', '--keys', keysFile], { env: { SANDBOX_STORAGE: redis.url } })
    const state = await (await fetch(`${second.url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${key}` } })).json()
    expect(state.activeLoans.map((item: { id: string }) => item.id)).toEqual([loan.id])
    const replay = await post(second.url, key, '/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }, 'persist-1')
    expect((await replay.json()).idempotency_replayed).toBe(true)
    // serve writes its request log every 500 ms: polled, as a fixed 700 ms can be too short on a busy machine.
    await vi.waitFor(async () => {
      const logs = await runCli(['logs', '--storage', redis.url, '--json'])
      expect(logs.code).toBe(0)
      expect(logs.stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line)).map((entry) => `${entry.method} ${entry.path} ${entry.status}`)).toEqual([
        'POST /api/sandbox/loans 200', 'GET /api/sandbox/loans 200', 'POST /api/sandbox/loans 200',
      ])
    }, { timeout: 15_000, interval: 200 })

    expect(await sessionKeys(redis.port)).toHaveLength(1)
    const reset = await runCli(['keys', 'reset', key, '--keys', keysFile, '--storage', redis.url])
    expect(reset.code).toBe(0)
    expect(await sessionKeys(redis.port)).toHaveLength(0)
    await new Promise((resolve) => setTimeout(resolve, 600))
    const fresh = await (await fetch(`${second.url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${key}` } })).json()
    expect(fresh.activeLoans).toEqual([])
    await second.stop()
  })

  it.skipIf(!hasRedis)('says in its log when the redis connection is lost and when it is back', async () => {
    const redis = await testRedis()
    await redis.flush()
    const serve = await startServe(['--port', '0', '--storage', redis.url, '--json-logs'])
    await redis.kill()
    await waitUntil(() => serve.output().includes('"event":"storage"'), 5_000, 'the connection-lost line')
    const down = await post(serve.url, 'sk_sandbox_e2e_key_0123456789', '/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }, 'down')
    expect(down.status).toBe(500)
    await redis.restart()
    await waitUntil(() => serve.output().includes('keys are gone'), 5_000, 'the connection-restored and keys-gone lines')
    const lines = serve.output().trim().split('\n').map((line) => JSON.parse(line))
    // The test's redis starts again empty, which the third line says.
    expect(lines.filter((line) => line.event === 'storage').map((line) => [line.level, /connection \w+|keys are gone/.exec(line.message)?.[0]])).toEqual([
      ['warn', 'connection lost'], ['info', 'connection restored'], ['warn', 'keys are gone'],
    ])
    expect(lines.find((line) => line.event === 'request')).toMatchObject({ status: 500, error_code: 'SANDBOX_API_KEY_DATABASE_REQUIRED' })
    const up = await post(serve.url, 'sk_sandbox_e2e_key_0123456789', '/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }, 'up')
    expect(up.status).toBe(200)
    expect(await serve.stop()).toBe(0)
  })

  it.skipIf(!hasRedis)('serves on a redis that asks for a password, and says what to do without it or with a wrong one', { timeout: MANY_RUNS_TIMEOUT_MS }, async () => {
    const redis = await passwordRedis()
    const served = await startServe(['--port', '0', '--quiet', '--storage', redis.url])
    expect(served.output()).toContain(`(storage redis redis://:***@127.0.0.1:${redis.port}/0,`)
    expect(served.output()).not.toContain('pw-123')
    expect((await post(served.url, 'sk_sandbox_e2e_key_0123456789', '/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }, 'pw')).status).toBe(200)
    expect(await served.stop()).toBe(0)
    const missing = await runCli(['serve', '--port', '0', '--storage', `redis://127.0.0.1:${redis.port}/0`])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('(NOAUTH Authentication required.); it asks for a password: put it in the URL, redis://:PASSWORD@HOST:PORT/DB')
    const wrong = await runCli(['serve', '--port', '0', '--storage', `redis://:nope@127.0.0.1:${redis.port}/0`])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain(`cannot use redis at redis://:***@127.0.0.1:${redis.port}/0 (WRONGPASS`)
    expect(wrong.stderr).toContain('check the user and password in the URL')
    expect(wrong.stderr).not.toContain('nope')
    // The redis client also reads a password from the query: hidden there too, in both log formats.
    const queried = await startServe(['--port', '0', '--json-logs', '--storage', `redis://127.0.0.1:${redis.port}/1?password=pw-123`])
    expect(JSON.parse(queried.output().split('\n')[0]!)).toMatchObject({ event: 'ready', redis_url: `redis://127.0.0.1:${redis.port}/1?password=***` })
    expect(await queried.stop()).toBe(0)
    const wrongQuery = await runCli(['serve', '--port', '0', '--storage', `redis://127.0.0.1:${redis.port}/1?password=nope-456`])
    expect(wrongQuery.stderr).toContain(`cannot use redis at redis://127.0.0.1:${redis.port}/1?password=*** (WRONGPASS`)
    expect(queried.output() + wrongQuery.stderr + wrongQuery.stdout).not.toMatch(/pw-123|nope-456/)
    // An ACL user whose keys are not sandbox:* ones: a setup error, not a crash with a stack.
    const admin = new Redis(redis.port, '127.0.0.1', { password: 'pw-123' })
    await admin.call('ACL', 'SETUSER', 'cache-only', 'on', '>cache-pw', '~cache:*', '+@all')
    await admin.quit()
    const denied = await runCli(['serve', '--port', '0', '--storage', `redis://cache-only:cache-pw@127.0.0.1:${redis.port}/0`])
    expect(denied.code).toBe(2)
    expect(denied.stderr).toContain(`cannot use redis at redis://cache-only:***@127.0.0.1:${redis.port}/0 (NOPERM`)
    expect(denied.stderr).toContain('grant it ACL SETUSER USER ~sandbox:*')
    expect(denied.stderr).not.toMatch(/\n\s+at |cache-pw/)
  })

  it.skipIf(!hasRedis)('warns at start, in its log, that a redis with maxmemory and an allkeys-* policy may delete the sandbox\'s state', async () => {
    const redis = await testRedis()
    const admin = new Redis(redis.port, '127.0.0.1')
    await admin.config('SET', 'maxmemory', '50mb')
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru')
    try {
      const serve = await startServe(['--port', '0', '--storage', redis.url, '--json-logs'])
      const [warning, ready] = serve.output().trim().split('\n').map((line) => JSON.parse(line))
      expect(warning).toMatchObject({ level: 'warn', event: 'storage' })
      expect(warning.message).toContain('has maxmemory 52428800 bytes with maxmemory-policy allkeys-lru: once full it deletes keys of any kind')
      expect(ready).toMatchObject({ event: 'ready' })
      expect(await serve.stop()).toBe(0)
    } finally {
      await admin.config('SET', 'maxmemory', '0')
      await admin.config('SET', 'maxmemory-policy', 'noeviction')
      await admin.quit()
    }
  })

  it.skipIf(!hasRedis)('serves on a TLS redis (rediss://) whose CA it is told to trust, and says how otherwise', async () => {
    const redis = await tlsRedis()
    expect(redis.url).toMatch(/^rediss:\/\//)
    const served = await startServe(['--port', '0', '--quiet', '--storage', redis.url], { env: { NODE_EXTRA_CA_CERTS: join(TLS, 'cert.pem') } })
    expect((await post(served.url, 'sk_sandbox_e2e_key_0123456789', '/api/sandbox/loans', { collateral_btc: 0.5, loan_amount: 20000 }, 'tls')).status).toBe(200)
    expect(await served.stop()).toBe(0)
    const untrusted = await runCli(['serve', '--port', '0', '--storage', redis.url])
    expect(untrusted.code).toBe(2)
    expect(untrusted.stderr).toContain(`cannot use redis at ${redis.url} (DEPTH_ZERO_SELF_SIGNED_CERT); its TLS certificate is not trusted here: give its CA with NODE_EXTRA_CA_CERTS=ca.pem`)
  })
})
