import { createStorage, defineDriver } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterEach, describe, expect, it } from 'vitest'
import type { DeliveryReport } from '../../src/webhooks/delivery-report.js'
import { createTestApi, newKey, type TestApi } from '../helpers/api.js'
import { findClosedPort, startReceiver } from '../helpers/receiver.js'

/** A memory storage that keeps the last session document written for each key, past its close. */
function createWatchedStorage() {
  const memory = memoryDriver()
  const last = new Map<string, string>()
  const faults = { landThenFail: 0 }
  const driver = defineDriver(() => ({
    ...memory,
    name: 'watched-memory',
    setItem(key: string, value: string) {
      if (key.startsWith('session:')) last.set(key, value)
      const written = memory.setItem!(key, value, {})
      if (key.startsWith('session:') && faults.landThenFail > 0) {
        faults.landThenFail--
        throw new Error('timed out (the write landed)')
      }
      return written
    },
  }))
  return { storage: createStorage({ driver: driver(undefined) }), last, faults }
}

let api: TestApi | undefined
afterEach(async () => {
  await api?.sandbox.close()
  api = undefined
})

type Row = { status: string; attempts: number }
const rows = (log: Row[]) => log.map((delivery) => [delivery.status, delivery.attempts])
async function waitFor(check: () => boolean | Promise<boolean>) {
  const deadline = Date.now() + 15_000
  while (!(await check()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
}

async function start(schedule: number[]) {
  const { storage, last, faults } = createWatchedStorage()
  const port = await findClosedPort()
  const reports: DeliveryReport[] = []
  api = await createTestApi({ storage, allowLocalWebhooks: true, webhookRetrySchedule: schedule, onDelivery: (report) => reports.push(report) })
  expect((await api.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })).status).toBe(200)
  expect((await api.post('/api/sandbox/loans', { collateral_btc: 0.05, loan_amount: 1000 })).status).toBe(200)
  await waitFor(() => reports.length >= 1)
  expect(reports.map((report) => report.status)).toEqual(['retrying'])
  return { api: api!, reports, last, port, faults }
}
/** Writes with more keys than the session cache holds (200), pushing the test key's document out. */
async function useOtherKeys(test: TestApi) {
  for (let i = 0; i < 230; i++) expect((await test.post('/api/sandbox/loans', { collateral_btc: 0.05, loan_amount: 1000 }, { key: newKey('other') })).status).toBe(200)
}
const log = async (test: TestApi) => (await test.get('/api/sandbox/webhooks')).body.deliveries as Row[]

describe('a refused attempt kept as a patch', () => {
  it('is applied once to a document read back from storage, before and after a request writes it', async () => {
    const { api: test } = await start([60_000])
    expect(rows(await log(test))).toEqual([['retrying', 1]])
    await useOtherKeys(test)
    expect(rows(await log(test))).toEqual([['retrying', 1]])
    // A request writing the key after a read back from storage: the patch applied once.
    expect((await test.call('DELETE', '/api/sandbox/webhooks')).status).toBe(200)
    expect(rows(await log(test))).toEqual([['retrying', 1]])
    await useOtherKeys(test)
    const shown = await test.get('/api/sandbox/webhooks')
    expect(rows(shown.body.deliveries)).toEqual([['retrying', 1]])
    expect(shown.body.endpoint.enabled).toBe(false)
  }, 60_000)

  it('put back by retry and refused again, evicted and read back, then stopped', async () => {
    const { api: test, reports, last, port } = await start([60_000])
    const [delivery] = (await log(test)) as unknown as Array<{ id: string }>
    const put = await test.post('/api/sandbox/webhooks/retry', { delivery_ids: [delivery!.id] })
    expect(put.status).toBe(200)
    await waitFor(() => reports.length >= 2)
    await test.sandbox.deliveriesIdle()
    expect(reports.map((report) => report.status)).toEqual(['retrying', 'retrying'])
    const shown = rows(await log(test))
    await useOtherKeys(test)
    expect(rows(await log(test))).toEqual(shown)
    await useOtherKeys(test)
    await test.sandbox.close()
    api = undefined
    const mine = [...last.entries()].filter(([, value]) => value.includes(`127.0.0.1:${port}/hook`))
    expect(rows(JSON.parse(mine[0]![1]).webhook.deliveries)).toEqual(shown)
  }, 60_000)

  it('a second attempt that succeeds, after a read back, is recorded once', async () => {
    const { api: test, reports, port } = await start([1500])
    // Out of the session cache first: the attempt that succeeds builds on the document read back.
    await useOtherKeys(test)
    const receiver = await startReceiver('/hook', port)
    try {
      await waitFor(() => reports.length >= 2)
      expect(reports.map((report) => report.status)).toEqual(['retrying', 'delivered'])
      expect(rows(await log(test))).toEqual([['delivered', 2]])
      await useOtherKeys(test)
      expect(rows(await log(test))).toEqual([['delivered', 2]])
    } finally {
      await receiver.close()
    }
  }, 60_000)

  it('with a staged 500-answer attempt on the forward target of the same key', async () => {
    const { storage, last } = createWatchedStorage()
    const port = await findClosedPort()
    const forward = await startReceiver('/fwd')
    forward.respond = () => 500
    const reports: DeliveryReport[] = []
    const test = (api = await createTestApi({ storage, allowLocalWebhooks: true, webhookRetrySchedule: [60_000], webhookForwardTo: forward.url, onDelivery: (report) => reports.push(report) }))
    try {
      expect((await test.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${port}/hook` })).status).toBe(200)
      expect((await test.post('/api/sandbox/partner', { name: 'Acme' })).status).toBe(200)
      await waitFor(() => reports.length >= 2)
      await test.sandbox.deliveriesIdle()
      expect(rows(await log(test))).toEqual([['retrying', 1], ['retrying', 1]])
      await useOtherKeys(test)
      expect(rows(await log(test))).toEqual([['retrying', 1], ['retrying', 1]])
      await new Promise((resolve) => setTimeout(resolve, 1500))
      await useOtherKeys(test)
      expect(rows(await log(test))).toEqual([['retrying', 1], ['retrying', 1]])
      await test.sandbox.close()
      api = undefined
      const mine = [...last.entries()].filter(([, value]) => value.includes('Acme'))
      expect(mine).toHaveLength(1)
      expect(rows(JSON.parse(mine[0]![1]).webhook.deliveries)).toEqual([['retrying', 1], ['retrying', 1]])
    } finally {
      forward.respond = () => 200
      await forward.close().catch(() => {})
    }
  }, 60_000)

  it('a chain of refused attempts, evicted between them', async () => {
    const { api: test, reports } = await start([400, 400, 60_000])
    for (let n = 2; n <= 3; n++) {
      await useOtherKeys(test)
      await waitFor(() => reports.length >= n)
      expect(rows(await log(test))).toEqual([['retrying', n]])
    }
    await useOtherKeys(test)
    expect(rows(await log(test))).toEqual([['retrying', 3]])
    expect((await test.call('DELETE', '/api/sandbox/webhooks')).status).toBe(200)
    await useOtherKeys(test)
    expect(rows(await log(test))).toEqual([['retrying', 3]])
  }, 60_000)

  it('pending, evicted, then a clean stop writes it', async () => {
    const { api: test, last, port } = await start([60_000])
    expect(rows(await log(test))).toEqual([['retrying', 1]])
    await useOtherKeys(test)
    await test.sandbox.close()
    api = undefined
    const mine = [...last.entries()].filter(([, value]) => value.includes(`127.0.0.1:${port}/hook`))
    expect(mine).toHaveLength(1)
    expect(rows(JSON.parse(mine[0]![1]).webhook.deliveries)).toEqual([['retrying', 1]])
  }, 60_000)

  it('a URL change made after a read back keeps the new URL and the attempt', async () => {
    const { api: test, last } = await start([60_000])
    await useOtherKeys(test)
    const other = await findClosedPort()
    expect((await test.post('/api/sandbox/webhooks', { url: `http://127.0.0.1:${other}/moved` })).status).toBe(200)
    await test.sandbox.deliveriesIdle()
    const shown = await test.get('/api/sandbox/webhooks')
    expect(shown.body.endpoint.url).toBe(`http://127.0.0.1:${other}/moved`)
    expect(rows(shown.body.deliveries)).toEqual([['retrying', 1]])
    await useOtherKeys(test)
    const again = (await test.get('/api/sandbox/webhooks')).body
    expect({ endpoint: again.endpoint, deliveries: again.deliveries }).toEqual({ endpoint: shown.body.endpoint, deliveries: shown.body.deliveries })
    await test.sandbox.close()
    api = undefined
    const mine = [...last.entries()].filter(([, value]) => value.includes(`127.0.0.1:${other}/moved`))
    expect(mine).toHaveLength(1)
    expect(rows(JSON.parse(mine[0]![1]).webhook.deliveries)).toEqual(rows(shown.body.deliveries))
  }, 60_000)

  it('a put-back whose write landed but was reported failed does not get the attempt again', async () => {
    const { api: test, faults, reports } = await start([60_000])
    const [delivery] = (await log(test)) as unknown as Array<{ id: string }>
    faults.landThenFail = 1
    const put = await test.post('/api/sandbox/webhooks/retry', { delivery_ids: [delivery!.id] })
    expect(put.status).toBe(500)
    // Read back from storage with the patch still pending: the put-back version is kept, and the
    // attempt already in it is not recorded again (attempts = attempts made).
    await test.sandbox.deliveriesIdle()
    expect(rows(await log(test))).toEqual([['pending', reports.length]])
  }, 60_000)
  it('a put-back whose write landed but was reported failed is sent again without another request', async () => {
    const { api: test, faults, reports, port } = await start([60_000])
    const [delivery] = (await log(test)) as unknown as Array<{ id: string }>
    faults.landThenFail = 1
    expect((await test.post('/api/sandbox/webhooks/retry', { delivery_ids: [delivery!.id] })).status).toBe(500)
    // Nothing else is asked of the key: the dispatcher looks at the document again by itself.
    const receiver = await startReceiver('/hook', port)
    try {
      await waitFor(() => reports.some((report) => report.status === 'delivered'))
      expect(reports.map((report) => report.status)).toEqual(['retrying', 'delivered'])
      expect(rows(await log(test))).toEqual([['delivered', 2]])
    } finally {
      await receiver.close()
    }
  }, 60_000)
})
