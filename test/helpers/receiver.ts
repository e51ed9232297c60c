import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { once } from 'node:events'
import { checkDeliveryAgainstContract } from './contract.js'
import { findFreePort } from './free-port.js'
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net'

/** One delivery a test receiver got. */
export interface Received {
  headers: IncomingHttpHeaders
  body: string
  at: number
}

/** A webhook receiver on 127.0.0.1 that records every request and answers `respond()`. */
export interface TestReceiver {
  url: string
  received: Received[]
  /** The status to answer the next request with (default 200). */
  respond: (received: Received) => number
  /** How long to wait before answering, in ms (a slow receiver). */
  delayMs: number
  /** The most requests it held unanswered at once, and the most connections open to it at once. */
  peakInFlight: number
  peakConnections: number
  /**
   * How the deliveries it got break the OpenAPI document's webhook entries (checkDeliveryAgainstContract):
   * `waitFor` and `close` throw when there is any, so every webhook test checks what the sandbox sends.
   */
  contractProblems: string[]
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>
  /** Stops it; throws afterwards if a delivery broke the contract. */
  close(): Promise<void>
}

/** `checkDeliveries: false` for a receiver of bodies the sandbox did not make (raw sends, a verify battery). */
export interface ReceiverOptions {
  checkDeliveries?: boolean
}

/** Ports findClosedPort holds, by the socket that holds each. */
const heldPorts = new Map<number, Socket>()

/** Lets go of a port findClosedPort holds, so that a receiver can listen there. */
async function releaseClosedPort(port: number): Promise<void> {
  const holder = heldPorts.get(port)
  if (!holder) return
  heldPorts.delete(port)
  // A reset, not a FIN: a socket that closes first lingers in TIME_WAIT on its port for a minute,
  // and a listener cannot bind where a socket without SO_REUSEADDR lingers.
  holder.resetAndDestroy()
  if (!holder.closed) await once(holder, 'close')
}

/** Starts a receiver on a free loopback port, or on `port` (a dead receiver from findClosedPort coming back). */
export async function startReceiver(path = '/webhooks', port = 0, options: ReceiverOptions = {}): Promise<TestReceiver> {
  await releaseClosedPort(port)
  const receiver: TestReceiver = {
    url: '',
    received: [],
    respond: () => 200,
    delayMs: 0,
    peakInFlight: 0,
    peakConnections: 0,
    contractProblems: [],
    async waitFor(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs
      while (receiver.received.length < count) {
        throwIfBroken()
        if (Date.now() > deadline) throw new Error(`receiver got ${receiver.received.length} of ${count} deliveries`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      throwIfBroken()
      return receiver.received
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
      throwIfBroken()
    },
  }
  const throwIfBroken = () => {
    if (receiver.contractProblems.length > 0) throw new Error(`a delivery breaks the OpenAPI document:\n${receiver.contractProblems.join('\n')}`)
  }
  let inFlight = 0
  let connections = 0
  const server: Server = createServer((req, res) => {
    receiver.peakInFlight = Math.max(receiver.peakInFlight, ++inFlight)
    res.once('close', () => inFlight--)
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const entry = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      receiver.received.push(entry)
      const answer = () => {
        res.statusCode = receiver.respond(entry)
        res.end('ok')
      }
      if (receiver.delayMs > 0) setTimeout(answer, receiver.delayMs)
      else answer()
      // After the answer is on its way, so that checking never slows a delivery down.
      if (options.checkDeliveries !== false) receiver.contractProblems.push(...checkDeliveryAgainstContract({ method: req.method, ...entry }))
    })
  })
  server.on('connection', (socket) => {
    receiver.peakConnections = Math.max(receiver.peakConnections, ++connections)
    socket.once('close', () => connections--)
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  return receiver
}

/**
 * A loopback port nobody listens on (connections to it are refused): a dead receiver. The port is
 * bound, as the local end of a connection this process keeps open, so no other server gets it
 * while the tests run: a port merely closed again was handed to another test's `listen(0)` about
 * 6 times in 20,000 here, and that server then got the dead receiver's deliveries (a paced-load
 * test counted one request too many). It is bound explicitly (`localPort`): a port the kernel
 * picks for a connection is shared with other outgoing connections, which then kept it after
 * startReceiver let it go (EADDRINUSE); an explicitly bound one was shared by none of 20,000.
 * Connections to it are refused until startReceiver is asked for that port (a receiver coming back).
 */
export async function findClosedPort(): Promise<number> {
  // Neither end of the held connection keeps the process alive.
  // The reset that releases the port reaches the accepted end as ECONNRESET: expected, not a failure.
  const server = createNetServer((accepted) => accepted.unref().on('error', () => {}))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    // A port another listen(0) takes between the probe's close and the bind: try the next one.
    for (let tries = 1; ; tries++) {
      const port = await findFreePort()
      const holder = connect({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', localAddress: '127.0.0.1', localPort: port })
      const failed = await Promise.race([once(holder, 'connect').then(() => undefined), once(holder, 'error').then(([error]) => error as Error)])
      if (failed && tries < 5) continue
      if (failed) throw failed
      holder.unref()
      heldPorts.set(port, holder)
      return port
    }
  } finally {
    // Stops listening at once; its callback would wait for the held connection to end.
    server.close()
    server.unref()
  }
}
