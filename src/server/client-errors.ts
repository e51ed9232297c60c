import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { ErrorCode } from '../errors/codes.js'
import { createRequestId } from './ids.js'
import type { ServerTimeouts } from './server-timeouts.js'
import { markRequestTimedOut } from './timed-out-requests.js'

/** How long a client answered here has to read the answer and close its side. */
const CLOSE_GRACE_MS = 1000

/**
 * What a request gets when Node cannot parse it, before h3 sees it: the decided envelope (JSON with
 * `request_id`, `error_code`, `error`) instead of Node's bare status line, so a client's error
 * handling reads it like any other answer. The status stays HTTP's own (431 for oversized headers,
 * 408 for a request that did not arrive within `timeouts`), with error_code INVALID_REQUEST.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, timeouts: Pick<ServerTimeouts, 'headersMs' | 'requestMs'>): void {
  // A client that hung up, or a socket already answered, can take nothing more.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const [status, message] = describeClientError(error.code, timeouts)
  // A request whose body did not arrive in time is one h3 is handling: the 408 is its answer.
  const requestId = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? markRequestTimedOut(socket, message) : undefined
  answerOnSocket(socket, status, message, requestId)
}

/**
 * Writes an INVALID_REQUEST answer in the decided envelope straight to SOCKET and closes it: for
 * requests h3 never sees (not HTTP Node can parse, or plain HTTP sent to the https port).
 */
export function answerOnSocket(socket: Duplex, status: number, message: string, knownRequestId?: string): void {
  const { requestId, body } = buildInvalidRequest(message, knownRequestId)
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`
    + `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
  )
  // Only our side is closed, so the client can still read the answer (tearing the socket down
  // with its input unread would reset the connection and could lose it). A client that ignores
  // the close and keeps sending would then hold the socket for good: it gets a moment, no more.
  const linger = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS)
  linger.unref()
  socket.once('close', () => clearTimeout(linger))
}

function describeClientError(code: string | undefined, timeouts: Pick<ServerTimeouts, 'headersMs' | 'requestMs'>): [number, string] {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return [431, `The request line and headers are larger than this server's limit of ${maxHeaderSize} bytes. Send long values in the JSON body.`]
  }
  // Node's code for both the headers and the whole-request limit (there is no HPE_ one for them).
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return [408, `The request did not arrive in time: this server waits ${formatMs(timeouts.headersMs)} for the headers and ${formatMs(timeouts.requestMs)} for the whole request.`]
  }
  return [400, `The request is not valid HTTP/1.1 (${code ?? 'parse error'}).`]
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}

/** The envelope of an INVALID_REQUEST answered outside h3, and its request id. */
function buildInvalidRequest(message: string, requestId = createRequestId()): { requestId: string; body: string } {
  const code: ErrorCode = 'INVALID_REQUEST'
  return { requestId, body: JSON.stringify({ request_id: requestId, error_code: code, error: message }) }
}

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown

/**
 * Answers an HTTP/1.1 request without a Host header with the envelope, as the other requests
 * that are not valid HTTP get: Node's own 400 for it has no body at all. The server must leave
 * the check to it (`requireHostHeader = false`, as listenSandbox sets).
 */
export function answerMissingHost(handler: NodeHandler): NodeHandler {
  return (req, res) => {
    if (req.httpVersion !== '1.1' || req.headers.host !== undefined) return handler(req, res)
    const { requestId, body } = buildInvalidRequest('An HTTP/1.1 request needs a Host header.')
    res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': requestId, connection: 'close' }).end(body)
  }
}
