import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { buildRequest, LOAN, newKey } from '../helpers/api.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

const testRedis = useTestRedis()
let sandbox: Sandbox | undefined
let receiver: TestReceiver | undefined
afterEach(async () => {
  ;(await testRedis()).resume()
  await sandbox?.close()
  sandbox = undefined
  await receiver?.close()
  receiver = undefined
})

describe.skipIf(!hasRedis)('a redis that stops answering past the command timeout, then carries out the write', () => {
  it('sends the deliveries that write stored once redis answers again', async () => {
    const redis = await testRedis()
    await redis.flush()
    receiver = await startReceiver('/ok')
    sandbox = await createSandbox({ storage: redis.url as `redis://${string}`, rateLimit: false, allowLocalWebhooks: true, logError: () => {}, onStorageStatus: () => {} })
    const key = newKey()
    const post = async (path: string, body: object, idempotencyKey?: string) => {
      const response = await sandbox!.fetch(buildRequest('http://x', 'POST', path, { body, idempotencyKey }, key))
      return { status: response.status, body: JSON.parse(await response.text()) }
    }
    expect((await post('/api/sandbox/webhooks', { url: receiver.url })).status).toBe(200)
    expect((await post('/api/sandbox/loans', LOAN)).status).toBe(200)
    await receiver.waitFor(1)
    await sandbox.deliveriesIdle()

    redis.pause()
    const failed = await post('/api/sandbox/loans', LOAN, 'paused-2')
    expect([failed.status, failed.body.error_code]).toEqual([500, 'SANDBOX_API_KEY_DATABASE_REQUIRED'])
    redis.resume()
    await receiver.waitFor(2, 10_000)

    const replayed = await post('/api/sandbox/loans', LOAN, 'paused-2')
    expect([replayed.status, replayed.body.idempotency_replayed, replayed.body.activeLoans.length]).toEqual([200, true, 2])
    expect((await post('/api/sandbox/loans', LOAN)).status).toBe(200)
    await receiver.waitFor(3)
  }, 30_000)
})
