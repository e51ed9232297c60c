import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { verifyWebhook } from '../../src/webhooks/signature.js'
import { killAll, startServe } from '../helpers/cli.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'
import { hasRedis, useTestRedis } from '../helpers/redis-server.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-webhook-crash')
const testRedis = useTestRedis()

/** `serve` flags of the storages the test runs on: fs, and redis when redis-server is installed. */
const storages: Array<[string, () => Promise<string[]>]> = [
  ['fs', async () => ['--data-dir', await tempDir()]],
]
if (hasRedis) {
  storages.push(['redis', async () => {
    const redis = await testRedis()
    await redis.flush()
    return ['--storage', redis.url]
  }])
}
let receiver: TestReceiver | undefined
afterEach(async () => {
  killAll()
  await receiver?.close()
})

async function createLoan(url: string, key: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${url}/api/sandbox/loans`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
      body: JSON.stringify({ collateral_btc: 0.01, loan_amount: 200 }),
    })
    if (response.status !== 200) return undefined
    return (await response.json()).activeLoans.at(-1).id
  } catch {
    return undefined
  }
}

describe.each(storages)('webhook deliveries across kill -9 on %s', (_name, chooseStorage) => {
  it('resumes pending deliveries after a restart, signed with the same forward secret, in order per key', async () => {
    const storage = await chooseStorage()
    receiver = await startReceiver()
    // A slow receiver keeps a backlog of deliveries queued when the server dies.
    receiver.delayMs = 25
    const args = ['--port', '0', '--quiet', ...storage, '--rate-limit', 'off', '--webhook-forward-to', receiver.url]
    const first = await startServe(args)
    const secret = /signed with (whsec_\S+)/.exec(first.output())![1]!
    const keys = Array.from({ length: 4 }, (_, i) => `sk_sandbox_whcrash_${i}_${randomUUID().replaceAll('-', '')}`)
    const issued = new Map<string, string[]>(keys.map((key) => [key, []]))
    await Promise.all(keys.map(async (key) => {
      for (let i = 0; i < 15; i++) {
        const loanId = await createLoan(first.url, key)
        if (loanId) issued.get(key)!.push(loanId)
      }
    }))
    // Kill while deliveries are still going out.
    await receiver.waitFor(5)
    first.child.kill('SIGKILL')
    await new Promise((resolve) => first.child.once('exit', resolve))
    const beforeRestart = receiver.received.length
    const total = [...issued.values()].reduce((sum, ids) => sum + ids.length, 0)
    expect(total).toBe(60)
    expect(beforeRestart).toBeLessThan(total)

    const second = await startServe(args)
    expect(second.output()).toContain(secret)
    await receiver.waitFor(total, 15_000)
    await new Promise((resolve) => setTimeout(resolve, 300))

    const seen = new Map<string, number>()
    const perLoanOrder: string[] = []
    for (const item of receiver.received) {
      const verified = verifyWebhook({ secret, body: item.body, headers: item.headers as Record<string, string> })
      seen.set(verified.eventId, (seen.get(verified.eventId) ?? 0) + 1)
      perLoanOrder.push(JSON.parse(item.body).data.object.id)
    }
    // Every issued loan's event arrived; only an attempt in flight at the kill may repeat (one per key).
    const received = new Set(perLoanOrder)
    for (const ids of issued.values()) for (const id of ids) expect(received.has(id)).toBe(true)
    const repeats = [...seen.values()].filter((count) => count > 1).length
    expect(repeats).toBeLessThanOrEqual(keys.length)
    for (const ids of issued.values()) {
      const order = [...new Set(perLoanOrder.filter((id) => ids.includes(id)))]
      expect(order).toEqual(ids)
    }
    await second.stop()
  }, 40_000)
})
