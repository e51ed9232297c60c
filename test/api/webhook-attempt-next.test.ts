import { afterEach, describe, expect, it, vi } from 'vitest'
import * as Output from '../../src/cli/output.js'
import { printDelivery } from '../../src/cli/serve-log-lines.js'
import type { DeliveryReport } from '../../src/webhooks/delivery-report.js'
import { createTestApi, type TestApi } from '../helpers/api.js'
import { findClosedPort, startReceiver, type TestReceiver } from '../helpers/receiver.js'

let api: TestApi | undefined
let receiver: TestReceiver | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await api?.sandbox.close()
  await receiver?.close()
  api = undefined
  receiver = undefined
})

/** Reports until `count` have come, up to a 10 s hang bound. */
async function waitForReports(reports: DeliveryReport[], count: number): Promise<void> {
  await vi.waitFor(() => expect(reports.length).toBeGreaterThanOrEqual(count), { timeout: 10_000, interval: 20 })
}

/** The line serve prints for REPORT, without colours. */
function printLine(report: DeliveryReport, json: boolean): string {
  let line = ''
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => { line += String(chunk); return true })
  printDelivery(Output, report, json)
  vi.restoreAllMocks()
  return line
}

describe('serve\'s line for a webhook attempt that did not deliver', () => {
  it('names the delivery id that webhook retry takes and, while retrying, when the next attempt is, as the delivery log does', async () => {
    receiver = await startReceiver('/hooks')
    receiver.respond = () => 500
    const reports: DeliveryReport[] = []
    api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [60_000], onDelivery: (report) => reports.push(report) })
    await api.post('/api/sandbox/webhooks', { url: `${receiver.url}` })
    const queued = await api.post('/api/sandbox/webhooks/test', {})
    await waitForReports(reports, 1)
    const delivery = (await api.get('/api/sandbox/webhooks')).body.deliveries[0]
    expect(delivery).toMatchObject({ id: queued.body.delivery.id, status: 'retrying', attempts: 1 })
    expect(reports[0]).toMatchObject({ delivery_id: delivery.id, status: 'retrying', next_attempt_at: delivery.next_attempt_at })
    const clock = Output.formatClock(delivery.next_attempt_at)
    expect(printLine(reports[0]!, false)).toMatch(new RegExp(` 500 retrying \\(attempt 1, next at ${clock}\\) \\d+ms ${delivery.id} ${queued.body.request_id}\\n$`))
    expect(JSON.parse(printLine(reports[0]!, true))).toMatchObject({ event: 'webhook', delivery_id: delivery.id, next_attempt_at: delivery.next_attempt_at })
  })

  it('says the same of an attempt at a receiver that refused the connection, and of the last attempt (failed: none next)', async () => {
    const port = await findClosedPort()
    const reports: DeliveryReport[] = []
    api = await createTestApi({ allowLocalWebhooks: true, webhookRetrySchedule: [200], onDelivery: (report) => reports.push(report) })
    await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hooks` })
    await api.post('/api/sandbox/webhooks/test', {})
    await waitForReports(reports, 2)
    const [first, last] = reports
    expect(first).toMatchObject({ status: 'retrying', attempt: 1 })
    expect(Date.parse(first!.next_attempt_at!)).toBeGreaterThan(Date.parse(first!.at))
    expect(printLine(first!, false)).toMatch(/ECONNREFUSED.* retrying \(attempt 1, next at \d\d:\d\d:\d\d\) \d+ms whd_\w+ req_\w+\n$/)
    expect(last).toMatchObject({ status: 'failed', attempt: 2, next_attempt_at: null })
    expect(printLine(last!, false)).toMatch(/ failed \(attempt 2\) \d+ms whd_\w+ req_\w+\n$/)
  })
})
