import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { killAll, startServe, waitUntil } from '../helpers/cli.js'
import { newKey } from '../helpers/api.js'

// `sandbox serve --log-bodies`: what a partner's client sent and what it got, in serve's output.

afterEach(() => killAll())

async function registerEndpoint(url: string, key: string): Promise<{ text: string; secret: string }> {
  const body = '{"url":"http://127.0.0.1:9/hooks","events":["sandbox.loan.issued"]}'
  const response = await fetch(`${url}/api/sandbox/webhooks`, { method: 'POST', body, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() } })
  const text = await response.text()
  expect(response.status).toBe(200)
  return { text, secret: JSON.parse(text).endpoint.signingSecret as string }
}

describe('sandbox serve --log-bodies', () => {
  it('prints the body sent and the answer under each request line, the signing secret masked', async () => {
    const server = await startServe(['--storage', 'memory', '--port', '0', '--allow-local-webhooks', '--log-bodies'])
    const { secret } = await registerEndpoint(server.url, newKey())
    expect(secret).toMatch(/^whsec_/)
    await waitUntil(() => server.output().includes('  < {'), 5000, 'the answer line')
    const lines = server.output().split('\n')
    const at = lines.findIndex((line) => / POST \/api\/sandbox\/webhooks 200 /.test(line))
    expect(lines[at + 1]).toBe('  > {"url":"http://127.0.0.1:9/hooks","events":["sandbox.loan.issued"]}')
    expect(lines[at + 2]).toContain(`"signingSecret":"whsec_****${secret.slice(-4)}"`)
    expect(server.output()).not.toContain(secret)
  })

  it('puts them in the --json-logs request line as request_body and response_body, and prints none with --quiet', async () => {
    const json = await startServe(['--storage', 'memory', '--port', '0', '--allow-local-webhooks', '--log-bodies', '--json-logs'])
    const { secret } = await registerEndpoint(json.url, newKey())
    await waitUntil(() => json.output().includes('"event":"request"'), 5000, 'the request line')
    const line = JSON.parse(json.output().split('\n').find((text) => text.includes('"event":"request"'))!)
    expect(line).toMatchObject({ method: 'POST', path: '/api/sandbox/webhooks', status: 200, request_body: '{"url":"http://127.0.0.1:9/hooks","events":["sandbox.loan.issued"]}' })
    expect(line.response_body).toContain(`"signingSecret":"whsec_****${secret.slice(-4)}"`)
    expect(json.output()).not.toContain(secret)

    const quiet = await startServe(['--storage', 'memory', '--port', '0', '--allow-local-webhooks', '--log-bodies', '--quiet'])
    await registerEndpoint(quiet.url, newKey())
    expect(quiet.output()).not.toContain('/api/sandbox/webhooks')
  })
})
