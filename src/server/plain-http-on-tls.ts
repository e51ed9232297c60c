import type { Server as TlsServer, TLSSocket } from 'node:tls'
import type { Duplex } from 'node:stream'
import ipaddr from 'ipaddr.js'
import { answerOnSocket } from './client-errors.js'

/**
 * OpenSSL's codes for a first record that is not TLS. It names HTTP only for GET, POST, HEAD and
 * PUT; any other request line (the API's DELETE) is a "wrong version number", as is any bytes a
 * TLS client never sends first. nginx takes every such connection for plain HTTP too.
 */
const NOT_TLS = new Set(['ERR_SSL_HTTP_REQUEST', 'ERR_SSL_WRONG_VERSION_NUMBER'])

/**
 * Answers a plain-HTTP request sent to the https port with a 400 naming the https:// URL, as Go's
 * servers do, instead of a reset connection that reads as a server that is down. The raw socket
 * under the failed TLS one can still carry a plain answer.
 */
export function answerPlainHttpOnTls(server: TlsServer, httpsUrl: string): void {
  const { hostname, port } = new URL(httpsUrl)
  const host = hostname.replace(/^\[|\]$/g, '')
  // On every interface (0.0.0.0, ::) the client came by a name or address of its own, which
  // the listener does not know: https://0.0.0.0:4010 is nowhere it could reach from a container.
  const everywhere = ipaddr.isValid(host) && ipaddr.process(host).range() === 'unspecified'
  const where = everywhere ? `with https:// to the same host and port (${port})` : `to ${httpsUrl}`
  server.on('tlsClientError', (error: NodeJS.ErrnoException, socket: TLSSocket) => {
    // Node's own handler destroys the TLS socket; the raw one below it is still open.
    const raw = (socket as TLSSocket & { _parent?: Duplex })._parent
    if (!NOT_TLS.has(error.code ?? '') || !raw?.writable) return
    answerOnSocket(raw, 400, `This server answers https only: send the request ${where}.`)
  })
}
