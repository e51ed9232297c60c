import { beforeAll, describe, expect, it } from 'vitest'
import { loadScenarios, runScenarios, SHIPPED_SCENARIOS_DIR, type Scenario } from '../../src/scenarios/index.js'
import { useProxiedSandbox } from '../helpers/reverse-proxy.js'

// A load balancer that moved the API under a path prefix redirects with a relative Location, as
// nginx's `return 308 /v2$request_uri;` and most load balancers' path rules send it.

const upstreamSandbox = useProxiedSandbox()
let loanFlow: Scenario

beforeAll(async () => {
  loanFlow = (await loadScenarios(SHIPPED_SCENARIOS_DIR)).find((scenario) => scenario.id === 'loan-flow')!
})

describe('a redirect with a relative Location', () => {
  it('is told as the absolute URL it leads to, with a --base-url that works, not a bare path', async () => {
    const moved = await upstreamSandbox.proxy({
      stripPrefix: '/v2',
      handler: (request, response, forward) => {
        if (request.url!.startsWith('/v2/')) return forward()
        response.writeHead(308, { location: `/v2${request.url}` })
        response.end()
      },
    })
    const report = await runScenarios([loanFlow], { baseUrl: `${moved.url}/` })
    expect(report.scenarios[0]).toMatchObject({ status: 'failed', connection_error: true })
    expect(report.scenarios[0]!.error).toBe(`the server answered 308, a redirect to ${moved.url}/v2/api/sandbox/state: redirects are not followed (a POST would come back as a GET, and the key is not sent to another origin); use --base-url ${moved.url}/v2`)
    // The base URL it names is the one that works.
    const again = await runScenarios([loanFlow], { baseUrl: `${moved.url}/v2` })
    expect(again.scenarios[0]!.status).toBe('passed')
  })

  it('resolves a Location relative to the path asked for, under the base URL\'s own prefix', async () => {
    const moved = await upstreamSandbox.proxy({ handler: (_request, response) => {
      response.writeHead(301, { location: '../../../new/api/sandbox/state' })
      response.end()
    } })
    const report = await runScenarios([loanFlow], { baseUrl: `${moved.url}/old` })
    expect(report.scenarios[0]!.error).toBe(`the server answered 301, a redirect to ${moved.url}/new/api/sandbox/state: redirects are not followed (a POST would come back as a GET, and the key is not sent to another origin); use --base-url ${moved.url}/new`)
  })
})
