import { afterAll, describe, expect, it } from 'vitest'
import { buildRequest, LOAN } from '../helpers/api.js'
import { killAll, startServe, waitUntil } from '../helpers/cli.js'
import { startReceiver } from '../helpers/receiver.js'

afterAll(() => killAll())

const KEY = 'sk_sandbox_delivery_lines_0001'

/** A direct loan on SERVE_URL, sent as a partner's client would: its answer's request_id. */
async function createLoan(serveUrl: string): Promise<string> {
  const answer = await fetch(buildRequest(serveUrl, 'POST', '/api/sandbox/loans', { body: LOAN }, KEY))
  expect(answer.status).toBe(200)
  return ((await answer.json()) as { request_id: string }).request_id
}

describe('serve\'s line per webhook delivery attempt', () => {
  it('names the event, the URL, the answer, the state, the attempt, and the request that queued it, as that request\'s line does', async () => {
    const receiver = await startReceiver('/hooks')
    try {
      const serve = await startServe(['--port', '0', '--storage', 'memory', '--webhook-forward-to', receiver.url])
      const requestId = await createLoan(serve.url)
      const [delivery] = await receiver.waitFor(1)
      const type = delivery!.headers['x-service-webhook-event']
      await waitUntil(() => / webhook \S+ -> /.test(serve.output()))
      expect(serve.output()).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d POST /api/sandbox/loans 200 \\d+ms ${requestId}$`, 'm'))
      expect(serve.output()).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d webhook ${type} -> ${receiver.url} 200 delivered \\(attempt 1\\) \\d+ms ${requestId}$`, 'm'))
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
