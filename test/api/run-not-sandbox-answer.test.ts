import { beforeAll, describe, expect, it } from 'vitest'
import { loadScenarios, runScenarios, SHIPPED_SCENARIOS_DIR, type Scenario } from '../../src/scenarios/index.js'
import { answerHtml, useProxiedSandbox } from '../helpers/reverse-proxy.js'

// What a base URL that reaches something other than the API gets: a load balancer's 404 page for
// a path prefix the URL lacks, a web app's page for every path, an empty answer. A failed step
// says the answer is not the API's, not only `expected 200, got 404` as if the API had said it.

const upstreamSandbox = useProxiedSandbox()
let shipped: Scenario[]
const NOTE = "so not the sandbox API's: is the base URL the root of a sandbox server (its path prefix included), not a web app or another service?"

beforeAll(async () => {
  shipped = await loadScenarios(SHIPPED_SCENARIOS_DIR)
})
const pick = (...ids: string[]) => ids.map((id) => shipped.find((scenario) => scenario.id === id)!)
const failedSteps = (report: Awaited<ReturnType<typeof runScenarios>>) => report.scenarios.map((scenario) => scenario.steps.find((step) => !step.ok))

describe('a failed step whose answer is not the API\'s', () => {
  it("a load balancer's 404 page and a web app's 200 page: the note says the answer is not JSON, so not the API's", async () => {
    const lb = await upstreamSandbox.proxy({ handler: (_request, response) => answerHtml(response, 404) })
    const [recover] = failedSteps(await runScenarios(pick('loan-flow'), { baseUrl: lb.url }))
    expect(recover).toMatchObject({ kind: 'recover', status: 404, note: `the answer is not JSON (text/html), ${NOTE}` })

    const app = await upstreamSandbox.proxy({ handler: (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      response.end('<!doctype html><html><body><div id="app"></div></body></html>')
    } })
    const [created] = failedSteps(await runScenarios(pick('direct-loan'), { baseUrl: app.url }))
    expect(created).toMatchObject({ name: 'create the loan', status: 200, note: `the answer is not JSON (text/html; charset=utf-8), ${NOTE}` })
  })

  it('an empty 500 is told as a proxy\'s answer, not a wrong base URL; the API\'s own error gets no such note', async () => {
    let count = 0
    const flaky = await upstreamSandbox.proxy({ handler: (_request, response, forward) => {
      if (count++ === 2) response.writeHead(500).end()
      else forward()
    } })
    const [empty] = failedSteps(await runScenarios(pick('direct-loan'), { baseUrl: flaky.url }))
    expect(empty).toMatchObject({ status: 500, note: "the answer is empty, so not the sandbox API's own: a proxy or load balancer in front of the server answered for it" })

    const own = await upstreamSandbox.proxy({ handler: (_request, response) => {
      response.writeHead(500, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ request_id: 'req_1', error_code: 'INTERNAL_ERROR', error: 'Internal error.' }))
    } })
    const [internal] = failedSteps(await runScenarios(pick('direct-loan'), { baseUrl: own.url }))
    expect(internal).toMatchObject({ status: 500, error_code: 'INTERNAL_ERROR' })
    expect(internal!.note).toBeUndefined()
  })
  it("a CDN's 429 page is told as its rate limit, not as a wrong base URL", async () => {
    const cdn = await upstreamSandbox.proxy({ handler: (_request, response) => {
      response.writeHead(429, { 'content-type': 'text/html', 'retry-after': '0' })
      response.end('<html><body>Error 1015: You are being rate limited</body></html>')
    } })
    const [limited] = failedSteps(await runScenarios(pick('direct-loan'), { baseUrl: cdn.url }))
    expect(limited).toMatchObject({ status: 429, ok: false })
    expect(limited!.note).toContain("the answer is not JSON (text/html), so not the sandbox API's own: a proxy, load balancer or CDN in front of the server answered for it")
    expect(limited!.note).not.toContain('is the base URL')
  })
})
