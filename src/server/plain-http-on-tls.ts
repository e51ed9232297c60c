import type { Server as TlsServer, TLSSocket } from 'node:tls'
import type { Duplex } from 'node:stream'
import { answerOnSocket } from './client-errors.js'

/**
 * Answers a plain-HTTP request sent to the https port with a 400 naming the https:// URL, as Go's
 * servers do, instead of a reset connection that reads as a server that is down. OpenSSL knows an
 * HTTP request line when the handshake gets one (ERR_SSL_HTTP_REQUEST), and the raw socket under
 * the failed TLS one can still carry a plain answer.
 */
export function answerPlainHttpOnTls(server: TlsServer, httpsUrl: string): void {
  server.on('tlsClientError', (error: NodeJS.ErrnoException, socket: TLSSocket) => {
    // Node's own handler destroys the TLS socket; the raw one below it is still open.
    const raw = (socket as TLSSocket & { _parent?: Duplex })._parent
    if (error.code !== 'ERR_SSL_HTTP_REQUEST' || !raw?.writable) return
    answerOnSocket(raw, 400, `This server answers https only: send the request to ${httpsUrl}.`)
  })
}
