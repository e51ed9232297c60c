import { afterEach, describe, expect, it } from 'vitest'
import { killAll, startServe, waitUntil } from '../helpers/cli.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

afterEach(() => killAll())

const testRedis = useTestRedis()

describe.skipIf(!hasRedis)('sandbox serve stopped while its redis is gone', () => {
  it('exits 1 and names the request log entries it could not save, rather than 0 as if it had flushed', async () => {
    const redis = await testRedis()
    await redis.flush()
    const serve = await startServe(['--port', '0', '--storage', redis.url])
    await redis.kill()
    await waitUntil(() => serve.output().includes('connection lost'), 5_000, 'the connection-lost line')
    for (let i = 0; i < 2; i++) {
      const answer = await fetch(`${serve.url}/api/sandbox/loans`, { headers: { authorization: 'Bearer sk_sandbox_e2e_key_0123456789' } })
      expect(answer.status).toBe(500)
    }
    expect(await serve.stop('SIGINT')).toBe(1)
    expect(serve.output()).toContain(`storage error: stopped without storage's last writes (redis ${redis.url} is not connected (`)
    expect(serve.output()).toMatch(/\)\): 2 request log entries, which sandbox logs will not show; what was answered is kept\n/)
    expect(serve.output()).toContain('sandbox stopped (SIGINT)')
  }, 30_000)
})
