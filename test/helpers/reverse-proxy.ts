import { readFileSync } from 'node:fs'
import { createServer as createHttpServer, request as forwardRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo, Socket } from 'node:net'
import { join } from 'node:path'
import { createBrotliCompress, createGzip } from 'node:zlib'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { createSandbox } from '../../src/server/create-sandbox.js'
import type { Sandbox } from '../../src/server/sandbox-types.js'
import { listenSandbox, type SandboxListener } from '../../src/server/listen.js'

const TLS_DIR = join(import.meta.dirname, '../fixtures/tls')

function readCertificate(prefix: string): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(join(TLS_DIR, `${prefix}cert.pem`)), key: readFileSync(join(TLS_DIR, `${prefix}key.pem`)) }
}

/** What the proxy does with one request, chosen by the test: forward it (with `forward`) or answer itself. */
export type ProxyHandler = (request: IncomingMessage, response: ServerResponse, forward: (options?: ForwardOptions) => void, index: number) => void

/** How a forwarded answer is passed on. */
export interface ForwardOptions {
  /** Held back before the first byte of the answer reaches the client. */
  delayMs?: number
  /** Compresses the answer (sent chunked, without Content-Length), as nginx's gzip or brotli module does. */
  encoding?: 'gzip' | 'br'
}

/** A reverse proxy on 127.0.0.1 in front of a sandbox, as a production deployment puts one. */
export interface ReverseProxy {
  url: string
  /** Every request the proxy got, in order: method, path (as received), and its headers. */
  requests: { method: string; path: string; headers: IncomingMessage['headers'] }[]
  close(): Promise<void>
}

/** What a proxy does: see startReverseProxy. */
export interface ProxyOptions {
  handler?: ProxyHandler
  stripPrefix?: string
  /** true: https with the certificate for 127.0.0.1; 'sandbox.test': the one for that name (fixtures/tls/README.md). */
  tls?: boolean | 'sandbox.test'
}

/** The upstream sandbox of a test file and the proxies its tests put in front of it. */
export interface ProxiedSandbox {
  /** The upstream's own URL (no trailing slash), set once the file's tests start. */
  readonly url: string
  /** Starts a proxy in front of the upstream, closed after the test. */
  proxy(options?: ProxyOptions): Promise<ReverseProxy>
}

/**
 * One in-process sandbox (memory storage, no rate limit) on 127.0.0.1 for a test file, started
 * before its tests and stopped after them; the proxies a test starts are closed after it.
 */
export function useProxiedSandbox(): ProxiedSandbox {
  let sandbox: Sandbox | undefined
  let listener: SandboxListener | undefined
  const proxies: ReverseProxy[] = []
  beforeAll(async () => {
    sandbox = await createSandbox({ storage: 'memory', rateLimit: false, logError: () => {} })
    listener = await listenSandbox(sandbox)
  })
  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()))
  })
  afterAll(async () => {
    await listener?.close()
    await sandbox?.close()
  })
  return {
    get url() {
      return listener!.url.replace(/\/+$/, '')
    },
    async proxy(options = {}) {
      const started = await startReverseProxy(this.url, options)
      proxies.push(started)
      return started
    },
  }
}

/**
 * Starts a proxy that hands each request to `handler`; `forward()` sends it to `target` with the
 * path prefix (`stripPrefix`) taken off, as nginx's `location /prefix/ { proxy_pass ...; }` does.
 * `tls: true` serves https with the self-signed fixture certificate.
 */
export async function startReverseProxy(target: string, options: ProxyOptions = {}): Promise<ReverseProxy> {
  const upstream = new URL(target)
  const requests: ReverseProxy['requests'] = []
  const sockets = new Set<Socket>()
  const forwardTo = (request: IncomingMessage, response: ServerResponse, forwardOptions: ForwardOptions = {}) => {
    const prefix = options.stripPrefix ?? ''
    const path = prefix && request.url!.startsWith(prefix) ? request.url!.slice(prefix.length) || '/' : request.url!
    const out = forwardRequest({ host: upstream.hostname, port: upstream.port, method: request.method, path, headers: { ...request.headers, host: upstream.host } }, (answer) => {
      setTimeout(() => {
        const { encoding } = forwardOptions
        if (!encoding) {
          response.writeHead(answer.statusCode!, answer.headers)
          answer.pipe(response)
          return
        }
        const { 'content-length': _length, ...headers } = answer.headers
        response.writeHead(answer.statusCode!, { ...headers, 'content-encoding': encoding })
        answer.pipe(encoding === 'gzip' ? createGzip() : createBrotliCompress()).pipe(response)
      }, forwardOptions.delayMs ?? 0)
    })
    out.on('error', () => response.destroy())
    request.pipe(out)
  }
  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    const index = requests.push({ method: request.method!, path: request.url!, headers: request.headers }) - 1
    const handler = options.handler ?? ((_request, _response, forward) => forward())
    handler(request, response, (forwardOptions) => forwardTo(request, response, forwardOptions), index)
  }
  const server: Server = options.tls
    ? createHttpsServer(readCertificate(options.tls === 'sandbox.test' ? 'proxied-' : ''), onRequest)
    : createHttpServer(onRequest)
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}

/** Answers with an HTML page, as nginx or a load balancer does for 502/503/504. */
export function answerHtml(response: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'text/html', ...headers })
  response.end(`<html><head><title>${status}</title></head><body><center><h1>${status}</h1></center><hr><center>nginx</center></body></html>\n`)
}
