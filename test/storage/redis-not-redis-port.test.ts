import { createServer, type Server } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { createSandboxStorage } from '../../src/storage/index.js'
import { adviseOn, pickStartReason } from '../../src/storage/redis-advice.js'

let server: Server | undefined
afterEach(async () => {
  await new Promise((resolve) => server ? server.close(resolve) : resolve(undefined))
  server = undefined
})

describe('a redis URL that reaches something other than a working redis', () => {
  it('says that what answers on the port is not redis, without the client\'s request for a bug report', async () => {
    // A web server on the port given, as after a mistyped port.
    server = createServer((_request, response) => response.end('hello'))
    const port = await new Promise<number>((resolve) => server!.listen(0, '127.0.0.1', () => resolve((server!.address() as { port: number }).port)))
    const error = await createSandboxStorage({ kind: 'redis', url: `redis://127.0.0.1:${port}/0`, owner: true }).catch((caught: unknown) => caught as Error)
    expect((error as Error).message).toBe(`cannot use redis at redis://127.0.0.1:${port}/0 (Protocol error, got "H" as reply type byte.); what answers on that port is not redis: check the host and port in the URL`)
  })

  it('keeps that reason over the error of a command the client sent before it closed the connection on it', () => {
    // Which of the two comes last depends on timing: in a warm process the second one often did.
    const protocol = 'Protocol error, got "H" as reply type byte. Please report this.'
    expect(pickStartReason(protocol, 'Stream isn\'t writeable and enableOfflineQueue options is false')).toBe(protocol)
  })

  it('says a host name does not resolve, and that a server that took the connection did not answer, rather than to start redis', () => {
    expect(adviseOn('ENOTFOUND', false, true)).toBe('no such host: check the host name in the URL')
    expect(adviseOn('Command timed out', false, false)).toBe('it took the connection but did not answer: check that the port is a redis server\'s and that the server is not stopped (SIGSTOP) or overloaded')
    expect(adviseOn('ECONNREFUSED', false, true)).toBe('start it, or use another storage (--storage fs or memory)')
  })
})
