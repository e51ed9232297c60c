import { spawn } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { BIN, killAll, startServe, waitUntil } from '../helpers/cli.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

afterEach(() => killAll())

const testRedis = useTestRedis()
const KEY = 'sk_sandbox_follow_outage_0123456789'

function get(url: string) {
  return fetch(`${url}/api/sandbox/loans`, { headers: { authorization: `Bearer ${KEY}` } })
}

/** A serve on a fresh test redis with one request logged, and `sandbox logs --follow` on it. */
async function startFollowing() {
  const redis = await testRedis()
  await redis.flush()
  const serve = await startServe(['--port', '0', '--quiet', '--storage', redis.url])
  expect((await get(serve.url)).status).toBe(200)
  const follower = spawn(process.execPath, [BIN, 'logs', '--follow', '--storage', redis.url], { env: { ...process.env, NO_COLOR: '1' } })
  const output = { out: '', err: '' }
  follower.stdout.on('data', (chunk) => { output.out += chunk })
  follower.stderr.on('data', (chunk) => { output.err += chunk })
  const exited = new Promise<number | null>((resolve) => follower.once('exit', resolve))
  return { redis, serve, follower, exited, out: () => output.out, err: () => output.err }
}

describe.skipIf(!hasRedis)('sandbox logs --follow on redis storage', () => {
  it('goes on following through a redis outage, says so, and prints the requests logged once it is back', { timeout: 60_000 }, async () => {
    const { redis, serve, follower, exited, out, err } = await startFollowing()
    try {
      await waitUntil(() => out().includes('GET    /api/sandbox/loans 200'), 15_000, 'the request logged before the outage')
      await redis.kill()
      await waitUntil(() => err().includes('connection lost'), 10_000, 'the connection-lost line')
      // Polls meanwhile fail: the follower must not end on them.
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      expect(follower.exitCode).toBeNull()
      await redis.restart()
      await waitUntil(() => serve.output().includes('connection restored') && err().includes('connection restored'), 15_000, 'both reconnected')
      expect((await get(serve.url)).status).toBe(200)
      await waitUntil(() => out().trim().split('\n').filter((line) => line.includes('GET    /api/sandbox/loans 200')).length === 2, 15_000, 'the request logged after the outage')
      expect(err()).toMatch(/^sandbox: redis redis:\/\/127\.0\.0\.1:\d+\/0: connection lost(?: \(\w+\))?; reading again once it is back$/m)
      expect(err()).not.toContain('SANDBOX_API_KEY_DATABASE_REQUIRED')
    } finally {
      follower.kill('SIGINT')
    }
    expect(await exited).toBe(0)
    await serve.stop()
  })

  it('goes on following while redis is paused past the command timeout, and prints the requests logged once it answers', { timeout: 60_000 }, async () => {
    const { redis, serve, follower, exited, out, err } = await startFollowing()
    try {
      await waitUntil(() => out().includes('GET    /api/sandbox/loans 200'), 15_000, 'the request logged before the pause')
      // Stopped with its connections open: the follower's reads time out rather than see a drop.
      redis.pause()
      try {
        await waitUntil(() => err().includes('did not answer'), 15_000, 'the line that says redis does not answer')
      } finally {
        redis.resume()
      }
      expect(follower.exitCode).toBeNull()
      expect((await get(serve.url)).status).toBe(200)
      await waitUntil(() => out().trim().split('\n').filter((line) => line.includes('GET    /api/sandbox/loans 200')).length === 2, 15_000, 'the request logged after the pause')
      expect(err()).toMatch(/^sandbox: redis redis:\/\/127\.0\.0\.1:\d+\/0 did not answer a read \(Command timed out\); reading again until it does$/m)
      expect(err()).not.toContain('unexpected error')
    } finally {
      follower.kill('SIGINT')
    }
    expect(await exited).toBe(0)
    await serve.stop()
  })
})
