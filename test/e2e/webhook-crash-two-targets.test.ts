import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, startServe } from '../helpers/cli.js'
import { startReceiver, type TestReceiver } from '../helpers/receiver.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

const tempDir = useTempDirs('sandbox-webhook-two-targets')
const receivers: TestReceiver[] = []
afterEach(async () => {
  killAll()
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
})

interface LoggedDelivery {
  event_id: string
  target: 'endpoint' | 'forward'
  status: string
  attempts: number
}

async function readLog(url: string, key: string): Promise<LoggedDelivery[]> {
  const answer = await fetch(`${url}/api/sandbox/webhooks`, { headers: { authorization: `Bearer ${key}` } })
  return (await answer.json()).deliveries
}

async function post(url: string, key: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}/api/sandbox/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
}

describe('an event going to the key\'s endpoint and to --webhook-forward-to, one receiver slow', () => {
  it('records the delivery the fast receiver accepted at once, so a kill -9 meanwhile does not send it again', async () => {
    const dir = await tempDir()
    const endpointReceiver = await startReceiver('/endpoint')
    const forwardReceiver = await startReceiver('/forward')
    receivers.push(endpointReceiver, forwardReceiver)
    // The forward receiver holds its request: that attempt is still in flight when the server dies.
    forwardReceiver.delayMs = 60_000
    const args = ['--port', '0', '--quiet', '--data-dir', dir, '--rate-limit', 'off', '--allow-local-webhooks', '--webhook-forward-to', forwardReceiver.url]
    const first = await startServe(args)
    const key = `sk_sandbox_two_targets_${randomUUID().replaceAll('-', '')}`
    expect((await post(first.url, key, 'webhooks', { url: endpointReceiver.url })).status).toBe(200)
    expect((await post(first.url, key, 'loans', { collateral_btc: 0.01, loan_amount: 200 })).status).toBe(200)
    await endpointReceiver.waitFor(1)
    await forwardReceiver.waitFor(1)

    // The endpoint's receiver answered 200: the log says so while the forward attempt is still out.
    let log: LoggedDelivery[] = []
    for (let waited = 0; waited < 20_000; waited += 50) {
      log = await readLog(first.url, key)
      if (log.some((delivery) => delivery.target === 'endpoint' && delivery.status !== 'pending')) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const byTarget = (target: string) => log.find((delivery) => delivery.target === target)
    expect(byTarget('endpoint')).toMatchObject({ status: 'delivered', attempts: 1 })
    expect(byTarget('forward')).toMatchObject({ status: 'pending', attempts: 0 })
    expect(forwardReceiver.received).toHaveLength(1)

    await first.stop('SIGKILL')
    forwardReceiver.delayMs = 0
    const second = await startServe(args)
    // The forward attempt that was in flight is sent again (at least once); the accepted one is not.
    await forwardReceiver.waitFor(2, 15_000)
    for (let waited = 0; waited < 15_000; waited += 50) {
      log = await readLog(second.url, key)
      if (log.every((delivery) => delivery.status === 'delivered')) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(log.map((delivery) => [delivery.target, delivery.status]).sort()).toEqual([['endpoint', 'delivered'], ['forward', 'delivered']])
    expect(endpointReceiver.received).toHaveLength(1)
    expect(await second.stop()).toBe(0)
  }, 60_000)
})
