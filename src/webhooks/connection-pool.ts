import { Agent as HttpAgent, type ClientRequestArgs } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { createDestinationGates, type DestinationGates } from './destination-gates.js'

/** Request options carrying a connection the sender opened itself (see sender.ts). */
export interface PreopenedRequestArgs extends ClientRequestArgs {
  preopened?: Socket
}

type CreateConnection = (options: ClientRequestArgs, callback?: (error: Error | null, stream: Duplex) => void) => Duplex | null | undefined

/** Agents take the connection the sender already opened, then keep it alive like any other. */
class PreopenedHttpAgent extends HttpAgent {
  override createConnection: CreateConnection = (options, callback) => (options as PreopenedRequestArgs).preopened ?? super.createConnection(options, callback)
}

class PreopenedHttpsAgent extends HttpsAgent {
  override createConnection: CreateConnection = (options, callback) => (options as PreopenedRequestArgs).preopened ?? super.createConnection(options, callback)
}

/**
 * Closes idle kept-alive connections before a receiver would: Node's servers close them after
 * 5 s, and a request sent on a connection the receiver is closing fails for nothing.
 */
const IDLE_TIMEOUT_MS = 4_000

/** Connections of one webhook sender: kept alive per destination, and the ones being opened. */
export interface ConnectionPool {
  http: HttpAgent
  https: HttpsAgent
  /** Destination -> the connection being opened there: the failure it ended with, or null once up. */
  opening: Map<string, Promise<string | null>>
  /** Places for sends in flight per destination (destination-gates.ts). */
  gates: DestinationGates
  /** Closes every kept-alive connection. */
  close(): void
}

/**
 * A pool for one sender (the dispatcher makes one and closes it when the server stops).
 * `inFlightPerDestination` defaults to the server's cap; `webhook listen --forward-to` lifts it,
 * since it passes on what the server already capped, as it arrives.
 */
export function createConnectionPool(options: { inFlightPerDestination?: number } = {}): ConnectionPool {
  const http = new PreopenedHttpAgent({ keepAlive: true, timeout: IDLE_TIMEOUT_MS })
  const https = new PreopenedHttpsAgent({ keepAlive: true, timeout: IDLE_TIMEOUT_MS })
  return {
    http,
    https,
    opening: new Map(),
    gates: createDestinationGates(options.inFlightPerDestination),
    close() {
      http.destroy()
      https.destroy()
    },
  }
}

/** Whether the agent holds an idle connection for these request options. */
export function hasIdleConnection(agent: HttpAgent, args: ClientRequestArgs): boolean {
  return (agent.freeSockets[agent.getName(args)]?.length ?? 0) > 0
}
