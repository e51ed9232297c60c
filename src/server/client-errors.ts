import { maxHeaderSize, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { createRequestId } from './ids.js'

/**
 * What a request gets when Node cannot parse it, before h3 sees it: the decided envelope (JSON with
 * `request_id`, `error_code`, `error`) instead of Node's bare status line, so a client's error
 * handling reads it like any other answer. The status stays HTTP's own (431 for oversized headers,
 * 408 for headers that never finished), with error_code INVALID_REQUEST.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A client that hung up, or a socket already answered, can take nothing more.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const [status, message] = describeClientError(error.code)
  const requestId = createRequestId()
  const body = JSON.stringify({ request_id: requestId, error_code: 'INVALID_REQUEST', error: message })
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`
    + `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
  )
}

function describeClientError(code: string | undefined): [number, string] {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return [431, `The request line and headers are larger than this server's limit of ${maxHeaderSize} bytes. Send long values in the JSON body.`]
  }
  if (code === 'HPE_REQUEST_TIMEOUT') return [408, 'The request headers did not arrive in time.']
  return [400, `The request is not valid HTTP/1.1 (${code ?? 'parse error'}).`]
}
