import { afterAll, describe, expect, it } from 'vitest'
import { buildRequest, LOAN } from '../helpers/api.js'
import { killAll, startServe, waitUntil } from '../helpers/cli.js'
import { findClosedPort, startReceiver } from '../helpers/receiver.js'
import { useTempDirs } from '../helpers/temp-dirs.js'

afterAll(() => killAll())
const tempDir = useTempDirs('sandbox-delivery-lines')

const KEY = 'sk_sandbox_delivery_lines_0001'

/** A direct loan on SERVE_URL, sent as a partner's client would: its answer's request_id. */
async function createLoan(serveUrl: string): Promise<string> {
  const answer = await fetch(buildRequest(serveUrl, 'POST', '/api/sandbox/loans', { body: LOAN }, KEY))
  expect(answer.status).toBe(200)
  return ((await answer.json()) as { request_id: string }).request_id
}

describe('serve\'s line per webhook delivery attempt', () => {
  it('names the event, the URL, the answer, the state, the attempt, the delivery id and the request that queued it, as that request\'s line does', async () => {
    const receiver = await startReceiver('/hooks')
    try {
      const serve = await startServe(['--port', '0', '--storage', 'memory', '--webhook-forward-to', receiver.url])
      const requestId = await createLoan(serve.url)
      const [delivery] = await receiver.waitFor(1)
      const type = delivery!.headers['x-service-webhook-event']
      await waitUntil(() => / webhook \S+ -> /.test(serve.output()))
      expect(serve.output()).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d POST /api/sandbox/loans 200 \\d+ms ${requestId}$`, 'm'))
      expect(serve.output()).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d webhook ${type} -> ${receiver.url} 200 delivered \\(attempt 1\\) \\d+ms whd_\\w+ ${requestId}$`, 'm'))
      expect(await serve.stop()).toBe(0)

      // --json-logs: request_id, as on the request's object, so one filter finds both.
      const json = await startServe(['--port', '0', '--storage', 'memory', '--webhook-forward-to', receiver.url, '--json-logs'])
      const jsonRequestId = await createLoan(json.url)
      await receiver.waitFor(2)
      await waitUntil(() => json.output().includes('"event":"webhook"'))
      const lines = json.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
      const ofRequest = lines.filter((line) => line.request_id === jsonRequestId).map((line) => line.event)
      expect(ofRequest.sort()).toEqual(['request', 'webhook'])
      expect(lines.find((line) => line.event === 'webhook')).toMatchObject({ event_type: type, url: receiver.url, status: 'delivered', status_code: 200, attempt: 1 })
      expect(await json.stop()).toBe(0)
    } finally {
      await receiver.close()
    }
  })
})

describe('serve --json-logs\' line for an attempt the receiver refused', () => {
  it('says why in error, as the delivery log\'s last_error does, rather than null', async () => {
    const receiver = await startReceiver('/hooks')
    receiver.respond = () => 503
    try {
      const serve = await startServe(['--port', '0', '--storage', 'memory', '--webhook-forward-to', receiver.url, '--json-logs'])
      await createLoan(serve.url)
      await receiver.waitFor(1)
      await waitUntil(() => serve.output().includes('"event":"webhook"'))
      const lines = serve.output().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(lines.find((line) => line.event === 'webhook')).toMatchObject({ status: 'retrying', status_code: 503, error: 'receiver answered 503', attempt: 1 })
      const log = await fetch(buildRequest(serve.url, 'GET', '/api/sandbox/webhooks', {}, KEY))
      const { deliveries } = (await log.json()) as { deliveries: Array<{ attempts: number; last_error: string | null }> }
      expect(deliveries.filter((delivery) => delivery.attempts > 0).map((delivery) => delivery.last_error)).toEqual(['receiver answered 503'])
      expect(await serve.stop()).toBe(0)
    } finally {
      await receiver.close()
    }
  })
})

describe('serve\'s start with deliveries already due', () => {
  it('prints the readiness line before any delivery line, so a script reading the first URL gets the server\'s', async () => {
    const dir = await tempDir()
    const dead = `http://127.0.0.1:${await findClosedPort()}/hooks`
    // The first attempt fails, the retry is due 100 ms later: by the restart it is due at once.
    const schedule = ['--webhook-retry-schedule', '100ms,1h']
    const first = await startServe(['--port', '0', '--data-dir', dir, '--webhook-forward-to', dead, ...schedule])
    await createLoan(first.url)
    await waitUntil(() => / webhook \S+ -> .* retrying \(attempt 1, next at /.test(first.output()))
    expect(await first.stop()).toBe(0)

    const receiver = await startReceiver('/hooks')
    try {
      const second = await startServe(['--port', '0', '--data-dir', dir, '--webhook-forward-to', receiver.url, ...schedule])
      await receiver.waitFor(1)
      await waitUntil(() => / webhook \S+ -> /.test(second.output()))
      const lines = second.output().split('\n')
      const ready = lines.findIndex((line) => line.startsWith('sandbox ready: '))
      expect(ready).toBeGreaterThanOrEqual(0)
      expect(lines.findIndex((line) => / webhook \S+ -> /.test(line))).toBeGreaterThan(ready)
      expect(await second.stop()).toBe(0)
    } finally {
      await receiver.close()
    }
  })
})
