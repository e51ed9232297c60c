import type { Socket } from 'node:net'
import type { Server as TlsServer, TLSSocket } from 'node:tls'

/**
 * Closes a connection to the https port whose TLS handshake has not finished `ms` after it
 * opened. Node's own limit is 120 s (and counts silence only): a few hundred clients that connect
 * and never speak would sit for minutes, where plain http cuts them at the headers limit.
 * 0 turns it off, as it does the headers limit.
 */
export function limitTlsHandshake(server: TlsServer, ms: number): void {
  if (ms === 0) return
  const pending = new WeakMap<Socket, NodeJS.Timeout>()
  server.on('connection', (raw: Socket) => {
    const timer = setTimeout(() => raw.destroy(), ms)
    timer.unref()
    pending.set(raw, timer)
    raw.once('close', () => clearTimeout(timer))
  })
  server.on('secureConnection', (socket: TLSSocket) => {
    // The raw socket under the TLS one, which the 'connection' listener saw.
    const raw = (socket as TLSSocket & { _parent?: Socket })._parent
    if (raw) clearTimeout(pending.get(raw))
  })
}
