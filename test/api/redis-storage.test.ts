import { afterEach, describe, expect, it } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { readRequestLog } from '../../src/server/read-request-log.js'
import { buildRequest, newKey } from '../helpers/api.js'
import { findClosedPort, startReceiver, type TestReceiver } from '../helpers/receiver.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'

const testRedis = useTestRedis()
const open = new Set<Sandbox>()
let receiver: TestReceiver | undefined
afterEach(async () => {
  await Promise.all([...open].map((sandbox) => sandbox.close()))
  open.clear()
  await receiver?.close()
  receiver = undefined
})

async function start(options: Parameters<typeof createSandbox>[0] = {}): Promise<Sandbox> {
  const redis = await testRedis()
  const sandbox = await createSandbox({ storage: redis.url as `redis://${string}`, rateLimit: false, logError: () => {}, onStorageStatus: () => {}, ...options })
  open.add(sandbox)
  return sandbox
}

async function stop(sandbox: Sandbox): Promise<void> {
  open.delete(sandbox)
  await sandbox.close()
}

async function send(sandbox: Sandbox, key: string, method: string, path: string, body?: object, idempotencyKey?: string) {
  const response = await sandbox.fetch(buildRequest('http://x', method, path, { body, idempotencyKey }, key))
  return { status: response.status, text: await response.text() }
}

const FLOW = [
  { action: 'start_collateral_transfer', collateral_btc: 0.01, loan_amount: 200 },
  { action: 'confirm_btc', tx_hash: 'tx "quoted" é', confirmations: 6 },
  { action: 'run_kyt' },
  { action: 'complete_payout' },
]

describe.skipIf(!hasRedis)('a sandbox on redis storage', () => {
  it('keeps loans, exact idempotent replays and the request log across a restart', async () => {
    await (await testRedis()).flush()
    const key = newKey()
    const first = await start()
    const answers: string[] = []
    for (const [i, body] of FLOW.entries()) {
      const answer = await send(first, key, 'POST', '/api/sandbox/loans/flow', body, `step-${i}`)
      expect(answer.status, answer.text).toBe(200)
      answers.push(answer.text)
    }
    await stop(first)

    const second = await start()
    const loans = JSON.parse((await send(second, key, 'GET', '/api/sandbox/loans')).text)
    expect(loans.activeLoans).toHaveLength(1)
    const strip = (text: string) => text.replace(/"request_id":"req_[0-9a-f]+"/, '').replace(/,"idempotency_replayed":(true|false)/, '')
    for (const [i, body] of FLOW.entries()) {
      const replay = await send(second, key, 'POST', '/api/sandbox/loans/flow', body, `step-${i}`)
      expect(replay.text).toContain('"idempotency_replayed":true')
      expect(strip(replay.text)).toBe(strip(answers[i]!))
    }
    await second.flush()
    const log = await readRequestLog(second.storage, { apiKey: key })
    expect(log.map((entry) => `${entry.method} ${entry.path} ${entry.status}`)).toEqual([
      ...FLOW.map(() => 'POST /api/sandbox/loans/flow 200'),
      'GET /api/sandbox/loans 200',
      ...FLOW.map(() => 'POST /api/sandbox/loans/flow 200'),
    ])
  })

  it('delivers, after a restart, the webhooks that were waiting when the server stopped, in order and once each', async () => {
    await (await testRedis()).flush()
    const key = newKey()
    const port = await findClosedPort()
    // Short enough that the first retry after the restart comes within the test.
    const options = { allowLocalWebhooks: true, webhookRetrySchedule: [500, 500, 500, 500] }
    const first = await start(options)
    expect((await send(first, key, 'POST', '/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })).status).toBe(200)
    for (const body of FLOW) expect((await send(first, key, 'POST', '/api/sandbox/loans/flow', body)).status).toBe(200)
    const waiting = JSON.parse((await send(first, key, 'GET', '/api/sandbox/webhooks')).text).deliveries as Array<{ event_id: string; status: string }>
    expect(waiting.map((delivery) => delivery.status)).toEqual(['pending', 'pending', 'pending', 'retrying'])
    await stop(first)

    receiver = await startReceiver('/hook', port)
    const second = await start(options)
    await receiver.waitFor(4)
    await second.deliveriesIdle()
    const bodies = receiver.received.map((entry) => JSON.parse(entry.body) as { id: string; type: string })
    expect(bodies.map((event) => event.type)).toEqual([
      'sandbox.loan_application.updated', 'sandbox.loan_application.updated', 'sandbox.loan_application.updated', 'sandbox.loan.issued',
    ])
    expect(bodies.map((event) => event.id)).toEqual(waiting.map((delivery) => delivery.event_id).reverse())
  })

  it('answers 500 SANDBOX_API_KEY_DATABASE_REQUIRED at once while redis is down, and serves again once it is back', async () => {
    const redis = await testRedis()
    await redis.flush()
    const statuses: string[] = []
    const sandbox = await start({ onStorageStatus: (message) => statuses.push(message) })
    const key = newKey()
    expect((await send(sandbox, key, 'POST', '/api/sandbox/loans/flow', FLOW[0])).status).toBe(200)
    await redis.kill()
    // At once: storage refuses a command as not connected, without a timeout (test/storage/redis.test.ts).
    const write = await send(sandbox, key, 'POST', '/api/sandbox/loans/flow', FLOW[1])
    const read = await send(sandbox, newKey(), 'GET', '/api/sandbox/loans')
    for (const answer of [write, read]) {
      expect(answer.status).toBe(500)
      expect(JSON.parse(answer.text).error_code).toBe('SANDBOX_API_KEY_DATABASE_REQUIRED')
    }
    await redis.restart()
    // Not the last line: the restarted redis is empty, which a line after it says.
    await expect.poll(() => statuses.some((message) => /connection restored/.test(message)), { timeout: 5_000 }).toBe(true)
    expect((await send(sandbox, newKey(), 'POST', '/api/sandbox/loans/flow', FLOW[0])).status).toBe(200)
  })
})
