import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { createServer as createNetServer, type AddressInfo } from 'node:net'

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
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

/** Starts a receiver on a free loopback port, or on `port`. */
export async function startReceiver(path = '/webhooks', port = 0): Promise<TestReceiver> {
  const receiver: TestReceiver = {
    url: '',
    received: [],
    respond: () => 200,
    delayMs: 0,
    peakInFlight: 0,
    peakConnections: 0,
    async waitFor(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs
      while (receiver.received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${receiver.received.length} of ${count} deliveries`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      return receiver.received
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
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

/** A loopback port nobody listens on (connections to it are refused): a dead receiver. */
export async function findClosedPort(): Promise<number> {
  const server = createNetServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}
