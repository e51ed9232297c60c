import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, runCli } from '../helpers/cli.js'
import { useProxiedSandbox } from '../helpers/reverse-proxy.js'

// A hosted sandbox, or a gateway in front of it, that quotes the key it refused in its error: the
// run prints the answer on a failed step, in every report CI keeps, where the key must not be.

const KEY = 'sk_sandbox_PartnerSecretKey0123456789'
const SHOWN = 'sk_sandbox_Part…6789'
const upstreamSandbox = useProxiedSandbox()
afterEach(() => {
  killAll()
})

describe('sandbox run with an --api-key an answer echoes', () => {
  it('masks the key in the terminal, --verbose, the JSON report, the JUnit report and the message it stops with', async () => {
    const echo = await upstreamSandbox.proxy({ handler: (request, response) => {
      const key = String(request.headers.authorization).replace(/^Bearer /, '')
      response.writeHead(401, { 'content-type': 'application/json', 'x-denied-key': key })
      response.end(JSON.stringify({ request_id: 'req_1', error_code: 'SANDBOX_API_KEY_INVALID', error: `The API key ${key} is not known here.` }))
    } })
    const junit = join(mkdtempSync(join(tmpdir(), 'echoed-key-')), 'report.xml')
    const text = await runCli(['run', 'loan-flow', '--base-url', echo.url, '--api-key', KEY, '--verbose', '--junit', junit])
    const json = await runCli(['run', 'loan-flow', '--base-url', echo.url, '--api-key', KEY, '--json'])
    expect([text.code, json.code]).toEqual([2, 2])
    expect(text.stderr).toContain(`The API key ${SHOWN} is not known here.`)
    expect(text.stdout).toContain(`x-denied-key: ${SHOWN}`)
    expect(JSON.parse(json.stdout).scenarios[0].steps[0].received.error).toBe(`The API key ${SHOWN} is not known here.`)
    for (const output of [text.stdout, text.stderr, json.stdout, json.stderr, readFileSync(junit, 'utf8')]) expect(output).not.toContain(KEY)
  })
  it('masks the key where an answer names it as a field, not a value (a gateway\'s quota per key)', async () => {
    const echo = await upstreamSandbox.proxy({ handler: (request, response) => {
      const key = String(request.headers.authorization).replace(/^Bearer /, '')
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '900' })
      response.end(JSON.stringify({ message: 'quota exceeded', quota: { [key]: { used: 1000, limit: 1000 } } }))
    } })
    const text = await runCli(['run', 'loan-flow', '--base-url', echo.url, '--api-key', KEY])
    const json = await runCli(['run', 'loan-flow', '--base-url', echo.url, '--api-key', KEY, '--json'])
    expect([text.code, json.code]).toEqual([1, 1])
    expect(JSON.parse(json.stdout).scenarios[0].steps[0].received.quota).toEqual({ [SHOWN]: { used: 1000, limit: 1000 } })
    for (const output of [text.stdout, text.stderr, json.stdout, json.stderr]) expect(output).not.toContain(KEY)
  })
})
