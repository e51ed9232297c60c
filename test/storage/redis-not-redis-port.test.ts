import { createServer, type Server } from 'node:http'
import { createServer as createNetServer, type Socket } from 'node:net'
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

describe('a redis in protected mode, which refuses a client from another machine', () => {
  it('says why, rather than that the connection closed and to start it', async () => {
    // What redis writes on accepting such a client, before it closes the connection.
    const denied = '-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface.\r\n'
    const sockets = new Set<Socket>()
    const tcp = createNetServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.end(denied)
    })
    const port = await new Promise<number>((resolve) => tcp.listen(0, '127.0.0.1', () => resolve((tcp.address() as { port: number }).port)))
    try {
      const error = await createSandboxStorage({ kind: 'redis', url: `redis://127.0.0.1:${port}/0`, owner: true }).catch((caught: unknown) => caught as Error)
      expect((error as Error).message).toMatch(new RegExp(`^cannot use redis at redis://127\\.0\\.0\\.1:${port}/0 \\(DENIED Redis is running in protected mode.*\\); it takes connections only from its own machine while its default user has no password: set one \\(requirepass\\) and give it in the URL, redis://:PASSWORD@HOST:PORT/DB$`))
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => tcp.close(resolve))
    }
  })
})

describe('a port that takes the connection and closes it without a word', () => {
  it('says so and what does that (a container port whose redis is not up), not the client\'s retry option nor to start redis', async () => {
    // What a published container port (docker-proxy, kubectl port-forward) does while nothing runs behind it.
    const sockets = new Set<Socket>()
    const tcp = createNetServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.end()
    })
    const port = await new Promise<number>((resolve) => tcp.listen(0, '127.0.0.1', () => resolve((tcp.address() as { port: number }).port)))
    try {
      for (const owner of [true, false]) {
        const error = await createSandboxStorage({ kind: 'redis', url: `redis://127.0.0.1:${port}/0`, owner }).catch((caught: unknown) => caught as Error)
        expect((error as Error).message).toBe(`cannot use redis at redis://127.0.0.1:${port}/0 (connection closed without an answer); something took the connection and closed it at once: check the port in the URL, or, for a port a container (docker, kubectl port-forward) publishes, that the redis behind it is running`)
      }
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => tcp.close(resolve))
    }
  })
})

describe('a redis at its maxclients whose refusal the client saw only as a reset', () => {
  it('names maxclients, read from what redis says to a connection that sends nothing, rather than advising rediss://', async () => {
    // Redis writes its refusal and closes as it accepts; a client whose first command got there
    // first sees a reset instead (the command was unread), and the refusal may be lost with it.
    const refusal = '-ERR max number of clients reached\r\n'
    const sockets = new Set<Socket>()
    let connections = 0
    const tcp = createNetServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
      if (++connections === 1) socket.once('data', () => socket.resetAndDestroy())
      else socket.end(refusal)
    })
    const port = await new Promise<number>((resolve) => tcp.listen(0, '127.0.0.1', () => resolve((tcp.address() as { port: number }).port)))
    try {
      const error = await createSandboxStorage({ kind: 'redis', url: `redis://127.0.0.1:${port}/0`, owner: true }).catch((caught: unknown) => caught as Error)
      expect((error as Error).message).toBe(`cannot use redis at redis://127.0.0.1:${port}/0 (ERR max number of clients reached); it has as many clients as its maxclients allows: close some (CLIENT LIST shows them) or raise maxclients`)
      expect(connections).toBe(2)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => tcp.close(resolve))
    }
  })

  it('keeps the rediss:// advice for a reset when nothing speaks first on a new connection (a TLS port)', async () => {
    const sockets = new Set<Socket>()
    const tcp = createNetServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
      // A TLS server waits for the client's hello, and drops a client that sends anything else.
      socket.once('data', () => socket.resetAndDestroy())
    })
    const port = await new Promise<number>((resolve) => tcp.listen(0, '127.0.0.1', () => resolve((tcp.address() as { port: number }).port)))
    try {
      const error = await createSandboxStorage({ kind: 'redis', url: `redis://127.0.0.1:${port}/0`, owner: true }).catch((caught: unknown) => caught as Error)
      expect((error as Error).message).toBe(`cannot use redis at redis://127.0.0.1:${port}/0 (ECONNRESET); it closed the connection at once: if that port speaks TLS, use rediss:// instead of redis://`)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => tcp.close(resolve))
    }
  })
})
