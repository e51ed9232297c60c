import type { IncomingMessage } from 'node:http'
import type { H3Event } from 'h3'
import { ApiError } from './api-error.js'
import { findHalfCharacter } from './half-characters.js'
import { findTimeoutMessage } from './timed-out-requests.js'

/** Largest request body accepted (decisions.md: above 1 MiB is 413 PAYLOAD_TOO_LARGE). */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * Deepest nesting of arrays and objects a body may have. The API's own bodies are two levels
 * deep; 1 MiB of `[` parses fine but overflows the stack of every recursive walk after it
 * (the idempotency fingerprint first), which would answer 500 and print a stack per request.
 */
export const MAX_BODY_DEPTH = 64

const decoder = new TextDecoder('utf-8', { fatal: true })

/**
 * Reads a Node request stream directly: far cheaper than going through a web ReadableStream.
 * Past the limit it stops keeping chunks and lets Node discard the rest, but never destroys the
 * stream: leaving a `for await` early would, and the 413 would then be written to a dead socket.
 */
function readNodeChunks(request: IncomingMessage): Promise<Uint8Array[]> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > MAX_BODY_BYTES) {
        stop()
        request.resume()
        reject(tooLarge())
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      stop()
      resolve(chunks)
    }
    const onError = (error: NodeJS.ErrnoException) => {
      stop()
      // Cut by this server's own time limit, not by the client: the 408 it was sent is the answer.
      const timeout = findTimeoutMessage(request.socket)
      if (timeout) return reject(new ApiError('INVALID_REQUEST', timeout, undefined, {}, 408))
      // A client that hangs up mid-body is not a server failure: no stack, and a 400 in the log.
      reject(error.code === 'ECONNRESET' ? new ApiError('INVALID_REQUEST', 'The client closed the connection before the whole body was sent.', { field: 'body', issue: 'incomplete' }) : error)
    }
    const stop = () => {
      request.off('data', onData)
      request.off('end', onEnd)
      request.off('error', onError)
    }
    // Gone before its body was read (the client hung up during serve --faults' latency): the
    // stream will emit nothing more, and waiting for it kept the request, unlogged, for good.
    if (request.destroyed && !request.readableEnded) return onError(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
    request.on('data', onData)
    request.once('end', onEnd)
    request.once('error', onError)
  })
}

async function readWebChunks(request: Request): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = []
  if (!request.body) return chunks
  const reader = request.body.getReader()
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
    }
    chunks.push(value)
  }
  return chunks
}

/**
 * Reads the raw body once, refusing it past MAX_BODY_BYTES without buffering the excess.
 * Returns '' for no body. A read begun by readBodyEarly is the one taken.
 */
export function readRawBody(event: H3Event): Promise<string> {
  return (event.context.bodyRead ??= readBodyNow(event)) as Promise<string>
}

/**
 * Begins reading the body now, for the route to take later: a body read only after serve --faults'
 * latency was gone with a client that hung up meanwhile (its timeout shorter than the latency),
 * though all of it had come, and the request that should have executed as usual did not.
 */
export function readBodyEarly(event: H3Event): void {
  // Its failure is the route's to answer, when it takes the read.
  readRawBody(event).catch(() => {})
}

async function readBodyNow(event: H3Event): Promise<string> {
  const declared = Number(event.req.headers.get('content-length') ?? '0')
  if (declared > MAX_BODY_BYTES) throw tooLarge()
  const node = event.runtime?.node?.req as IncomingMessage | undefined
  const chunks = node ? await readNodeChunks(node) : await readWebChunks(event.req)
  if (chunks.length === 0) return ''
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
  try {
    const text = decoder.decode(bytes)
    // A body can be read once: `serve --log-bodies` finds it here (readLoggedBody).
    event.context.rawBody = text
    return text
  } catch {
    throw new ApiError('INVALID_JSON', 'Request body is not valid UTF-8 JSON.')
  }
}

/** The raw body readRawBody read for EVENT, if it read one (for `serve --log-bodies`). */
export function readLoggedBody(event: H3Event): string | undefined {
  const text = event.context.rawBody
  return typeof text === 'string' ? text : undefined
}

/** Parses a raw body as JSON; an empty body is `undefined`. Refuses nesting past MAX_BODY_DEPTH. */
export function parseJsonBody(raw: string): unknown {
  if (raw.trim() === '') return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch (error) {
    throw new ApiError('INVALID_JSON', 'Request body is not valid JSON.', { parse_error: (error as Error).message })
  }
  if (measureDepth(raw) > MAX_BODY_DEPTH) {
    throw new ApiError('INVALID_REQUEST', `Request body is nested deeper than ${MAX_BODY_DEPTH} levels.`, { field: 'body', issue: `nested deeper than ${MAX_BODY_DEPTH} levels` })
  }
  // Half a character is no more UTF-8 than a stray byte is, which the decoder refuses above.
  const field = findHalfCharacter(raw, parsed)
  if (field !== undefined) {
    const issue = 'holds half of a character (a \\ud800-\\udfff escape without its pair)'
    throw new ApiError('INVALID_JSON', `Request body is not valid UTF-8 JSON: ${field} ${issue}, as a string cut inside an emoji leaves; send whole characters.`, { field, issue })
  }
  return parsed
}

/**
 * Deepest bracket nesting of JSON text already known to be valid, by one scan of the text: a
 * walk of the parsed value would itself need a stack as deep as the body.
 */
function measureDepth(json: string): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < json.length; i++) {
    const char = json.charCodeAt(i)
    if (inString) {
      if (char === 0x5c) i++ // backslash: the escaped character cannot end the string
      else if (char === 0x22) inString = false
    } else if (char === 0x22) inString = true
    else if (char === 0x5b || char === 0x7b) deepest = Math.max(deepest, ++depth)
    else if (char === 0x5d || char === 0x7d) depth--
  }
  return deepest
}

function tooLarge(): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${MAX_BODY_BYTES} bytes.`, { max_bytes: MAX_BODY_BYTES })
}
