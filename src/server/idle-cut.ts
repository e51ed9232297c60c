import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { ServerTimeouts } from './server-timeouts.js'

/** A request on a connection and its answer, until the answer is done. */
interface Exchange {
  req: IncomingMessage
  res: ServerResponse
}

/** What Node itself writes for a request past its limit when no `clientError` listener answers it. */
const NODE_REQUEST_TIMEOUT_ANSWER = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'

/**
 * Decides what the idle-connection limit (`server.timeout`, serve's 30 s of no bytes moving) cuts:
 * a client that stopped reading an answer or sending its body, or an idle keep-alive connection,
 * but not a connection whose whole request arrived and whose answer the server is still preparing.
 * No bytes move while a request waits behind its key's earlier ones, and one key with 20,000 loans
 * takes ~0.3 s a POST: of 100 sent at once, 41 were cut unanswered at 30 s, though all were carried
 * out (measured, fs storage). Node destroys a socket on its timeout only when nobody listens for
 * it; with this listener that is done here, for every other case.
 */
export function limitIdleToClients(server: Server, timeouts: Pick<ServerTimeouts, 'requestMs' | 'idleSocketMs'>): void {
  const open = new WeakMap<Socket, Set<Exchange>>()
  // Idle since its last byte, a request has been arriving at least that long: past the
  // whole-request limit when that is no longer (serve's are both 30 s).
  const pastRequestLimit = timeouts.requestMs > 0 && timeouts.requestMs <= timeouts.idleSocketMs
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    let exchanges = open.get(socket)
    if (!exchanges) open.set(socket, (exchanges = new Set()))
    const exchange = { req, res }
    exchanges.add(exchange)
    res.once('close', () => exchanges.delete(exchange))
  })
  server.on('timeout', (socket: Socket) => {
    const exchanges = [...(open.get(socket) ?? [])]
    const preparing = exchanges.some(({ req, res }) => req.complete && !res.headersSent)
    if (preparing) return socket.setTimeout(server.timeout)
    // A body that stopped coming gets the whole-request limit's 408, which Node's check (every
    // second) would send a moment later, rather than a cut that leaves a client with a wrong
    // Content-Length nothing to go on.
    const bodyStalled = exchanges.some(({ req, res }) => !req.complete && !res.headersSent)
    if (bodyStalled && pastRequestLimit) return answerRequestTimeout(server, socket)
    socket.destroy()
  })
}

function answerRequestTimeout(server: Server, socket: Socket): void {
  const error = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' })
  if (server.emit('clientError', error, socket)) return
  socket.end(NODE_REQUEST_TIMEOUT_ANSWER, () => socket.destroy())
}
