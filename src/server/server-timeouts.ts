import type { Server } from 'node:http'

/** How long the server waits on a client before it cuts the connection. All in milliseconds. */
export interface ServerTimeouts {
  /** From a connection's first byte (or its opening) to the end of the request headers: 408 after. */
  headersMs: number
  /** From the first byte to the end of the request body: 408 after. At least `headersMs`. */
  requestMs: number
  /** How long a keep-alive connection may sit idle between requests before it is closed. */
  keepAliveMs: number
  /**
   * How long a connection with a request open may move no bytes either way, such as a client
   * that never reads a large answer, while the server is not preparing its answer; the socket is
   * closed after it. Node lets a write that was still moving at the first expiry have one more
   * period, so a stuck answer goes within twice this.
   */
  idleSocketMs: number
  /** How often the headers and request limits are checked, so a cut comes at most this late. */
  checkIntervalMs: number
}

/** Limits to override; one left out or undefined keeps its default. */
export type ServerTimeoutOverrides = { [K in keyof ServerTimeouts]?: ServerTimeouts[K] | undefined }

/**
 * What `serve` uses. A local client sends its headers and a body of at most 1 MiB in well under
 * a second, so these only ever cut a client that stalls; Node's own 60 s / 300 s let a few
 * hundred trickling connections sit for minutes. The idle limit never cuts an answer still being
 * prepared, however long its key's queue (idle-cut.ts). Keep-alive stays Node's 5 s.
 */
export const DEFAULT_SERVER_TIMEOUTS: ServerTimeouts = {
  headersMs: 15_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  idleSocketMs: 30_000,
  checkIntervalMs: 1_000,
}

/** Fills in defaults and refuses values Node would misread (negative, fractional, or headers past the request limit). */
export function resolveServerTimeouts(overrides: ServerTimeoutOverrides = {}): ServerTimeouts {
  // A limit given as undefined (a variable not set) keeps its default, as every other option does.
  const given = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined))
  const timeouts = { ...DEFAULT_SERVER_TIMEOUTS, ...given }
  for (const [name, value] of Object.entries(timeouts)) {
    if (!Number.isInteger(value) || value < 0) throw new RangeError(`timeouts.${name} must be a whole number of milliseconds >= 0, got ${value}`)
  }
  // An interval of 0 would check on every tick; 0 means "off" only for the limits themselves.
  if (timeouts.checkIntervalMs === 0) throw new RangeError('timeouts.checkIntervalMs must be above 0')
  if (timeouts.requestMs > 0 && timeouts.headersMs > timeouts.requestMs) {
    throw new RangeError(`timeouts.headersMs (${timeouts.headersMs}) must not exceed timeouts.requestMs (${timeouts.requestMs})`)
  }
  return timeouts
}

/**
 * Sets the limits on a server that is already listening (listhen creates it without options).
 * Node reads the checking interval only when the server starts listening, so its own start-up
 * step is run once more to re-arm the check at the new interval.
 */
export function applyServerTimeouts(server: Server, timeouts: ServerTimeouts): void {
  server.headersTimeout = timeouts.headersMs
  server.requestTimeout = timeouts.requestMs
  server.keepAliveTimeout = timeouts.keepAliveMs
  server.timeout = timeouts.idleSocketMs
  const mutable = server as Server & { connectionsCheckingInterval: number }
  mutable.connectionsCheckingInterval = timeouts.checkIntervalMs
  // Node's http server registers this on 'listening'; it clears the old timer before it sets
  // the new one. Were it ever gone, the limits would still hold, only checked every 30 s.
  const rearm = server.listeners('listening').find((listener) => listener.name === 'setupConnectionsTracking')
  rearm?.call(server)
}
