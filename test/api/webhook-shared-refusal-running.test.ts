import { afterEach, describe, expect, it } from 'vitest'
import type { DeliveryReport } from '../../src/webhooks/delivery-report.js'
import { createTestApi, LOAN, type TestApi } from '../helpers/api.js'
import { findClosedPort } from '../helpers/receiver.js'
import { startSilentServer, type SilentServer } from '../helpers/silent-server.js'

let api: TestApi | undefined
let silent: SilentServer | undefined
afterEach(async () => {
  // The hanging receiver first: the attempt still out then ends at once.
  await silent?.close()
  await api?.sandbox.close()
  api = silent = undefined
})

interface LoggedDelivery {
  id: string
  target: string
  status: string
  attempts: number
}

describe('a forward URL that refused a connection a moment ago, the key\'s worker running', () => {
  it('prints the attempts of a new forward delivery that the delivery log records, no more', async () => {
    silent = await startSilentServer()
    const reports: DeliveryReport[] = []
    let next: (() => void) | undefined
    api = await createTestApi({
      allowLocalWebhooks: true,
      webhookForwardTo: `http://127.0.0.1:${await findClosedPort()}/forward`,
      webhookRetrySchedule: [50],
      onDelivery: (report) => {
        reports.push(report)
        // The forward delivery of the first event just failed (refused): the next request comes
        // at once, well within the moment its refusal stands for a new delivery's first attempt.
        if (report.target === 'forward' && report.status === 'failed' && next) {
          const run = next
          next = undefined
          run()
        }
      },
    })
    // The endpoint's receiver holds its first request: the key's worker runs all along.
    expect((await api.post('/api/sandbox/webhooks', { url: `${silent.url}/hang` })).status).toBe(200)
    const second = new Promise<number>((resolve) => {
      next = () => void api!.post('/api/sandbox/loans/flow', { action: 'confirm_btc', tx_hash: 'tx-1', confirmations: 6 }).then((answer) => resolve(answer.status))
    })
    expect((await api.post('/api/sandbox/loans/flow', { action: 'start_collateral_transfer', ...LOAN })).status).toBe(200)
    expect(await second).toBe(200)

    // Both forward deliveries have run their schedule (two attempts each) and failed.
    const deadline = Date.now() + 15_000
    let forwarded: LoggedDelivery[] = []
    for (;;) {
      const log = (await api.get('/api/sandbox/webhooks')).body.deliveries as LoggedDelivery[]
      forwarded = log.filter((delivery) => delivery.target === 'forward')
      if ((forwarded.length === 2 && forwarded.every((delivery) => delivery.status === 'failed')) || Date.now() > deadline) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    // Give a stray retry of a parked head time to show up in the printed lines.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(forwarded.map((delivery) => [delivery.status, delivery.attempts])).toEqual([['failed', 2], ['failed', 2]])
    for (const delivery of forwarded) {
      const printed = reports.filter((report) => report.delivery_id === delivery.id)
      expect(printed.map((report) => [report.attempt, report.status])).toEqual([[1, 'retrying'], [2, 'failed']])
    }
    expect(silent.requests()).toBe(1)
  }, 30_000)
})
