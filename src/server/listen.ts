import { createServer } from 'node:net'
import type { Duplex } from 'node:stream'
import type { Server as TlsServer } from 'node:tls'
import { toNodeHandler, type H3 } from 'h3'
import type { Listener } from 'listhen'
import type { Sandbox } from './sandbox-types.js'
import { answerClientError, answerMissingHost } from './client-errors.js'
import { isWholeNumber, showOptionValue } from '../text/whole-numbers.js'
import { isUnsafePort } from 'get-port-please'
import { createPortInUseError, createPortUnsafeError, toListenError } from './listen-errors.js'
import { applyServerTimeouts, resolveServerTimeouts, type ServerTimeoutOverrides } from './server-timeouts.js'
import { limitIdleToClients } from './idle-cut.js'
import { checkTlsPair, readPemPair, type TlsPairInput } from './tls-pair.js'
import { answerPlainHttpOnTls } from './plain-http-on-tls.js'
import { limitTlsHandshake } from './tls-handshake-limit.js'
import { createSandboxClosedError, isSandboxClosed, trackListener, trackOpening } from './sandbox-listeners.js'

/** A sandbox bound to a port. */
export interface SandboxListener {
  url: string
  port: number
  /**
   * Stops accepting connections and resolves once in-flight requests have finished. The
   * sandbox's own close() calls it too; a second call waits for the first.
   */
  close(): Promise<void>
}

/** How long close() waits for in-flight requests by default before cutting their connections. */
export const CLOSE_CAP_MS = 10_000

/**
 * Fails with code EADDRNOTAVAIL when nothing can listen on `host` (an address this machine does
 * not have, or a name that does not resolve), or EACCES when `port` needs privileges: listhen
 * would report both as no free port.
 */
async function checkHostUsable(host: string, port: number): Promise<void> {
  const probe = createServer()
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => {
      // A busy port is for listhen's own check; a privileged one listhen would call busy too.
      if (error.code === 'EADDRINUSE') return resolve()
      reject(toListenError(error, port, host))
    })
    probe.listen(port, host, () => probe.close(() => resolve()))
  })
}

/** Where listenSandbox listens. */
export interface ListenOptions {
  /** Default 0: any free port (the listener's `url` and `port` tell which). */
  port?: number | undefined
  /** Default 127.0.0.1. */
  host?: string | undefined
  /** How long close() waits for in-flight requests before cutting their connections (10 s). */
  closeTimeoutMs?: number | undefined
  /** Limits on slow or stalled clients; unset ones keep `serve`'s defaults (DEFAULT_SERVER_TIMEOUTS). */
  timeouts?: ServerTimeoutOverrides | undefined
  /** Serve https with this certificate and key (PEM, as text or Buffers); a pair that cannot serve is a SetupError. */
  tls?: TlsPairInput | undefined
}

/**
 * Serves a sandbox over HTTP (or https, with `tls`) through listhen, as `sandbox serve` does. listhen would quietly move
 * to another port when the asked one is busy; here that is an error (code EADDRINUSE), unless
 * port 0 asked for any port. A host this machine cannot listen on is code EADDRNOTAVAIL, and a port
 * browsers and fetch() block is code UNSAFE_PORT. A sandbox that close() was called on is an Error:
 * its storage is closed, and its close() closes the listeners it has.
 */
export async function listenSandbox(sandbox: Pick<Sandbox, 'app'>, options: ListenOptions = {}): Promise<SandboxListener> {
  // From JavaScript, a createSandbox() without its await failed as "reading 'fetch'" of undefined.
  if (typeof (sandbox as { app?: { fetch?: unknown } } | undefined)?.app?.fetch !== 'function') {
    const promised = typeof (sandbox as { then?: unknown } | undefined)?.then === 'function'
    throw new TypeError(`listenSandbox takes the sandbox createSandbox resolves with, not ${promised ? 'its promise: await createSandbox() first' : String(sandbox)}`)
  }
  const app = sandbox.app as H3
  if (isSandboxClosed(app)) throw createSandboxClosedError('listenSandbox')
  return trackOpening(app, openListener(app, options))
}

async function openListener(app: H3, options: ListenOptions): Promise<SandboxListener> {
  const { port = 0, host = '127.0.0.1' } = options
  // A string (process.env.PORT) was reported as a busy port, a negative closeTimeoutMs cut every request.
  if (!isWholeNumber(port, 0, 65535)) {
    throw new RangeError(`port ${showOptionValue(port)}: expected a whole number from 0 to 65535 (0 = any free port)${typeof port === 'string' ? '; a variable\'s text needs Number()' : ''}`)
  }
  if (options.closeTimeoutMs !== undefined && !isWholeNumber(options.closeTimeoutMs, 0)) {
    throw new RangeError(`closeTimeoutMs ${showOptionValue(options.closeTimeoutMs)}: expected milliseconds, a whole number from 0`)
  }
  const timeouts = resolveServerTimeouts(options.timeouts)
  const tls = options.tls ? checkTlsPair(readPemPair(options.tls)) : undefined
  let listener: Listener
  // listhen skips such a port without a word, and would then report it as busy.
  if (port !== 0 && isUnsafePort(port)) throw createPortUnsafeError(port, host)
  await checkHostUsable(host, port)
  try {
    // Loaded here, not with the package: listhen (and node-forge, which it loads for https) is a
    // fifth of the package's import time, which a test suite that never listens pays per file.
    const { listen } = await import('listhen')
    // toNodeHandler calls only the app's fetch, which is all a SandboxApp promises.
    listener = await listen(answerMissingHost(toNodeHandler(app)), {
      port: port === 0 ? { port: 0, random: true } : { port, random: false, ports: [], portRange: [], alternativePortRange: [] } as never,
      hostname: host,
      // PEM text: listhen takes a value starting with "--" as the certificate itself, not a path.
      https: tls ? { cert: tls.cert, key: tls.key } : false,
      showURL: false,
      isProd: true,
      public: false,
      open: false,
      clipboard: false,
      qr: false,
      autoClose: false,
    })
  } catch (error) {
    if (/available port/i.test((error as Error).message)) throw createPortInUseError(port, host, error)
    throw error
  }
  const actual = listener.address.port
  if (port !== 0 && actual !== port) {
    await listener.close()
    throw createPortInUseError(port, host)
  }
  applyServerTimeouts(listener.server, timeouts)
  // Read per request by Node: answerMissingHost answers these from now on.
  ;(listener.server as { requireHostHeader?: boolean }).requireHostHeader = false
  limitIdleToClients(listener.server, timeouts)
  listener.server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, timeouts))
  const displayHost = host.includes(':') ? `[${host}]` : host
  const url = `${tls ? 'https' : 'http'}://${displayHost}:${actual}`
  if (tls) {
    answerPlainHttpOnTls(listener.server as unknown as TlsServer, url)
    limitTlsHandshake(listener.server as unknown as TlsServer, timeouts.headersMs)
  }
  let closing: Promise<void> | undefined
  const close = () => closing ??= closeGracefully(listener, options.closeTimeoutMs ?? CLOSE_CAP_MS).finally(() => untrack())
  const untrack = trackListener(app, close)
  // close() was called while this listener was starting: it waits for this call, so close now.
  if (isSandboxClosed(app)) {
    await close()
    throw createSandboxClosedError('listenSandbox')
  }
  return { url, port: actual, close }
}

// listhen's close() drops idle keep-alive sockets and waits for active ones, with no limit: a
// stuck client must not keep a stopping server alive forever.
async function closeGracefully(listener: Listener, capMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const cap = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      listener.server.closeAllConnections()
      resolve()
    }, capMs)
    timer.unref()
  })
  try {
    await Promise.race([listener.close(), cap])
  } finally {
    clearTimeout(timer)
  }
}
