import { randomUUID } from 'node:crypto'
import { request as forwardRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadScenarios, runScenarios, SHIPPED_SCENARIOS_DIR, type Scenario } from '../../src/scenarios/index.js'
import { useProxiedSandbox } from '../helpers/reverse-proxy.js'

// The spec requires a request_id in every answer and ids for applications and loans, but no
// format for any of them: `req_`, `app_` and `loan_` are this sandbox's (decisions.md). A hosted
// sandbox with UUIDs or other prefixes keeps the spec, and the shipped scenarios that run against
// any server must pass there.

const upstreamSandbox = useProxiedSandbox()
let shipped: Scenario[]

beforeAll(async () => {
  shipped = await loadScenarios(SHIPPED_SCENARIOS_DIR)
})

const OURS = /\b(app|loan)_([0-9a-f]{24})\b/g
const THEIRS = /\b(app|loan)-([0-9a-f]{24})\b/g

/** Forwards to the sandbox with its ids in another format: `req_...` as UUIDs, `app_x`/`loan_x` as `app-x`/`loan-x` (and back in requests). */
function rewriteIds(request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const upstream = new URL(upstreamSandbox.url)
    const body = Buffer.concat(chunks).toString().replace(THEIRS, '$1_$2')
    const { 'content-length': _length, ...headers } = request.headers
    const out = forwardRequest({ host: upstream.hostname, port: upstream.port, method: request.method, path: request.url!.replace(THEIRS, '$1_$2'), headers: { ...headers, host: upstream.host } }, (answer) => {
      const parts: Buffer[] = []
      answer.on('data', (chunk: Buffer) => parts.push(chunk))
      answer.on('end', () => {
        const text = Buffer.concat(parts).toString().replace(/"req_[0-9a-f]+"/g, () => `"${randomUUID()}"`).replace(OURS, '$1-$2')
        const { 'content-length': _sent, ...answerHeaders } = answer.headers
        response.writeHead(answer.statusCode!, { ...answerHeaders, 'x-request-id': randomUUID() }).end(text)
      })
    })
    out.end(body)
  })
}

describe('a server whose ids have another format than this sandbox\'s', () => {
  it('passes the shipped scenarios that run against any server', async () => {
    const other = await upstreamSandbox.proxy({ handler: rewriteIds })
    const ids = ['loan-flow', 'partner-profile', 'request-errors', 'webhook-endpoint-rules', 'repay-full']
    const report = await runScenarios(ids.map((id) => shipped.find((scenario) => scenario.id === id)!), { baseUrl: other.url, remote: true })
    const failed = report.scenarios.filter((scenario) => scenario.status !== 'passed').map((scenario) => ({ id: scenario.id, failures: scenario.steps.flatMap((step) => step.failures.map((failure) => failure.message)) }))
    expect(failed).toEqual([])
    // The ids it saw were the other server's.
    expect(other.requests.some((request) => /\/loans\/loan-[0-9a-f]{24}\//.test(request.path))).toBe(true)
  }, 30_000)
})
