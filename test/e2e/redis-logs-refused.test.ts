import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

afterEach(() => killAll())

const testRedis = useTestRedis()

describe.skipIf(!hasRedis)('sandbox logs on a redis that refuses its reads', () => {
  it('fails as a storage error (exit 2) naming what redis refused, not as an unexpected error with a stack', async () => {
    const redis = await testRedis()
    const admin = new Redis(redis.port, '127.0.0.1')
    // Fast commands only, a common hardening: the start's EXISTS and GET pass, the log's SCAN does not.
    await admin.acl('SETUSER', 'fast-only', 'on', '>pw', '~sandbox:*', '+@fast', '+info', '+@connection')
    try {
      const url = redis.url.replace('//', '//fast-only:pw@')
      for (const follow of [[], ['--follow']]) {
        const logs = await runCli(['logs', ...follow, '--storage', url])
        expect([logs.code, logs.stderr]).toEqual([2, 'sandbox: storage failed to read the request log: NOPERM this user has no permissions to run the \'scan\' command\n'])
      }
    } finally {
      await admin.acl('DELUSER', 'fast-only')
      await admin.quit()
    }
  })
})
