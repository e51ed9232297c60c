import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.js'

// A base URL that reaches another server answering 2xx JSON, such as `webhook listen`'s port given
// by mistake: the commands crashed with "unexpected error" and a stack, or (register, disable)
// exited 0 with lines about an endpoint that does not exist.
describe('webhook commands pointed at a server that is not a sandbox', () => {
  let server: Server
  let baseUrl: string
  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume()
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const commands = [['deliveries'], ['retry'], ['trigger', 'loan.issued'], ['register', 'https://partner.example.com/hooks'], ['disable']]
  it.each(commands)('webhook %s exits 2 saying the base URL is not a sandbox, with no stack', async (...args) => {
    const result = await runCli(['webhook', ...args, '--base-url', baseUrl])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/answered 200: not the sandbox API's JSON \(no request_id\): is the base URL the root of a sandbox server/)
    expect(result.stderr).not.toMatch(/unexpected error|TypeError|    at /)
  })

  it('--json gives one UNREACHABLE document', async () => {
    const result = await runCli(['webhook', 'deliveries', '--json', '--base-url', baseUrl])
    expect(result.code).toBe(2)
    expect(JSON.parse(result.stdout).error.code).toBe('UNREACHABLE')
  })
})
