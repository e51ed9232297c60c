import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { answerHtml, useProxiedSandbox } from '../helpers/reverse-proxy.js'

// `sandbox run --wait` against a server behind a proxy that is up before it (docker compose with
// nginx in front): the proxy's 502 page is not the server answering, so the wait goes on.

const upstreamSandbox = useProxiedSandbox()
afterEach(() => {
  killAll()
})

describe('sandbox run --wait behind a proxy', () => {
  it("waits through the proxy's 502/503 pages until the server behind it answers, and the run passes", async () => {
    // 3 s from the first request: longer than the retries of a request (250 ms + 500 ms + 1 s),
    // so a run that did not wait would stop on the proxy's pages.
    let upAt: number | undefined
    const proxy = await upstreamSandbox.proxy({ handler: (_request, response, forward, index) => {
      upAt ??= performance.now() + 3_000
      if (performance.now() < upAt) answerHtml(response, index % 2 ? 503 : 502)
      else forward()
    } })
    const { code, stdout, stderr } = await runCli(['run', 'loan-flow', '--base-url', proxy.url, '--wait', '20s'])
    expect(stderr).toBe('')
    expect([code, stdout.trimEnd().split('\n').at(-1)]).toEqual([0, '1 passed, 0 failed'])
    expect(stdout).not.toContain('from a proxy in front of the server')
  })

  it("ends the wait at once on the API's own 503 (its JSON error_code): the server answers, and the step reports it", async () => {
    const proxy = await upstreamSandbox.proxy({ handler: (_request, response) => {
      response.writeHead(503, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ request_id: 'req_1', error_code: 'SANDBOX_FAULT_INJECTED', error: 'Injected fault.' }))
    } })
    const started = performance.now()
    const { code, stdout } = await runCli(['run', 'loan-flow', '--base-url', proxy.url, '--wait', '20s'])
    expect(performance.now() - started).toBeLessThan(10_000)
    expect(code).toBe(1)
    expect(stdout).toContain('503 SANDBOX_FAULT_INJECTED')
  })
})
