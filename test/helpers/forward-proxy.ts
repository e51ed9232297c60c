import { createServer, request as forwardRequest, type IncomingMessage } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'

/** One request a forward proxy got: `GET http://host/path` (absolute form) or `CONNECT host:443`. */
export interface ProxiedRequest {
  method: string
  target: string
  proxyAuthorization: string | undefined
}

/** What the proxy does, chosen by the test. */
export interface ForwardProxyOptions {
  /** Where each `host:port` the client asks for really is: always a port on 127.0.0.1. */
  routes: Record<string, number>
  /** Answers every CONNECT with this status instead of opening the tunnel; a function chooses per CONNECT (undefined: open it). */
  refuseConnect?: number | (() => number | undefined)
  /** The Proxy-Authorization the proxy asks for (407 without it). */
  requireAuthorization?: string
}

/** A forward proxy on 127.0.0.1, as corporate networks and CI runners put in front of the internet. */
export interface ForwardProxy {
  url: string
  requests: ProxiedRequest[]
  close(): Promise<void>
}

function refuse(socket: Socket, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nproxy-authenticate: Basic realm="test"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`)
}

/**
 * Starts a forward proxy on 127.0.0.1 that reaches only the ports ROUTES name: a client asking for
 * `sandbox.test:443` is tunnelled to 127.0.0.1, so no request leaves the machine and no name is
 * looked up in DNS.
 */
export async function startForwardProxy(options: ForwardProxyOptions): Promise<ForwardProxy> {
  const requests: ProxiedRequest[] = []
  const sockets = new Set<Socket>()
  const record = (request: IncomingMessage): boolean => {
    const proxyAuthorization = request.headers['proxy-authorization']
    requests.push({ method: request.method!, target: request.url!, proxyAuthorization })
    return options.requireAuthorization === undefined || proxyAuthorization === options.requireAuthorization
  }
  const server = createServer((request, response) => {
    if (!record(request)) {
      response.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"', 'content-type': 'text/html' }).end('<h1>407 Proxy Authentication Required</h1>')
      return
    }
    const target = URL.canParse(request.url!) ? new URL(request.url!) : undefined
    const port = target && options.routes[`${target.hostname}:${target.port || 80}`]
    if (!target || port === undefined) {
      response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>502 Bad Gateway</h1>')
      return
    }
    const upstream = forwardRequest({ host: '127.0.0.1', port, method: request.method, path: `${target.pathname}${target.search}`, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode!, answer.headers)
      answer.pipe(response)
    })
    upstream.on('error', () => response.destroy())
    request.pipe(upstream)
  })
  server.on('connect', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    if (!record(request)) return refuse(socket, 407, 'Proxy Authentication Required')
    const refusal = typeof options.refuseConnect === 'function' ? options.refuseConnect() : options.refuseConnect
    if (refusal !== undefined) return refuse(socket, refusal, 'Refused')
    const port = options.routes[request.url!]
    if (port === undefined) return refuse(socket, 502, 'Bad Gateway')
    const upstream = connect(port, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      upstream.write(head)
      upstream.pipe(socket)
      socket.pipe(upstream)
    })
    upstream.on('error', () => socket.destroy())
    socket.on('close', () => upstream.destroy())
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
