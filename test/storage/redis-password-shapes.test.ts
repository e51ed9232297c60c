import { describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { maskUrlPassword } from '../../src/text/url-password.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

const testRedis = useTestRedis({ password: 'pw-right' })

describe('redis URLs whose password the client or redis-cli reads from another place', () => {
  it('hides a name given alone, which redis-cli reads as the password, and a percent-encoded ?password=', () => {
    expect(maskUrlPassword('redis://s3cret@127.0.0.1:6379/0')).toBe('redis://***@127.0.0.1:6379/0')
    expect(maskUrlPassword('rediss://s3cret@cache.example:6380')).toBe('rediss://***@cache.example:6380')
    expect(maskUrlPassword('redis://127.0.0.1:6379/0?pass%77ord=s3cret')).toBe('redis://127.0.0.1:6379/0?pass%77ord=***')
    expect(maskUrlPassword('redis://127.0.0.1:6379/0?family=4&%70assword=s3cret&db=1')).toBe('redis://127.0.0.1:6379/0?family=4&%70assword=***&db=1')
  })

  it.skipIf(!hasRedis)('never prints such a password in the start error', async () => {
    const redis = await testRedis()
    const plain = redis.url.replace(':pw-right@', '')
    for (const url of [plain.replace('//', '//pw-wrong@'), `${plain}?pass%77ord=pw-wrong`]) {
      const error = await createSandboxStorage({ kind: 'redis', url }).then(() => new Error(`${url} was taken`), (caught: Error) => caught)
      expect(error.message).toMatch(/^cannot use redis at redis:\/\/.*\(WRONGPASS/)
      expect(error.message).not.toContain('pw-wrong')
    }
  })
})
