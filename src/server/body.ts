import { ApiError } from './api-error.js'

/** Largest request body accepted (decisions.md: above 1 MiB is 413 PAYLOAD_TOO_LARGE). */
export const MAX_BODY_BYTES = 1024 * 1024

const decoder = new TextDecoder('utf-8', { fatal: true })

/**
 * Reads the raw body once, refusing it past MAX_BODY_BYTES without buffering the excess.
 * Returns '' for no body.
 */
export async function readRawBody(request: Request): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? '0')
  if (declared > MAX_BODY_BYTES) throw tooLarge()
  if (!request.body) return ''
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
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
  if (chunks.length === 0) return ''
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
  try {
    return decoder.decode(bytes)
  } catch {
    throw new ApiError('INVALID_JSON', 'Request body is not valid UTF-8 JSON.')
  }
}

/** Parses a raw body as JSON; an empty body is `undefined`. */
export function parseJsonBody(raw: string): unknown {
  if (raw.trim() === '') return undefined
  try {
    return JSON.parse(raw)
  } catch (error) {
    throw new ApiError('INVALID_JSON', 'Request body is not valid JSON.', { parse_error: (error as Error).message })
  }
}

function tooLarge(): ApiError {
  return new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${MAX_BODY_BYTES} bytes.`, { max_bytes: MAX_BODY_BYTES })
}
