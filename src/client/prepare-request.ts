import { randomUUID } from 'node:crypto'
import { SandboxRequestError } from './api-error.js'
import { NOT_IN_HEADER } from './header-value.js'
import type { ClientRequest, PreparedRequest, TransportOptions } from './request-types.js'

/**
 * Refuses a header value HTTP cannot carry, by name, instead of fetch's "Cannot convert argument to
 * a ByteString", which the retries would take for a network error.
 */
function checkHeaderValue(name: string, value: string): void {
  const bad = NOT_IN_HEADER.exec(value)
  if (!bad) return
  const char = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
  // An Authorization value is the API key: messages end up in logs.
  const shown = name === 'authorization' ? 'its value (the API key, not shown)' : JSON.stringify(value)
  throw new SandboxRequestError(`the ${name} header cannot carry ${shown}: U+${char} is not a character an HTTP header can hold (Latin-1 text without control characters)`)
}

/**
 * Builds the wire form of a request; POSTs get the caller's Idempotency-Key or a fresh one. An
 * Idempotency-Key or Authorization the caller put in `headers` (any case) is used, not doubled.
 */
export function prepareRequest(options: Pick<TransportOptions, 'baseUrl' | 'apiKey'>, request: ClientRequest): PreparedRequest {
  const given = Object.fromEntries(Object.entries(request.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]))
  const idempotencyKey = request.method !== 'POST' || request.idempotencyKey === null ? null : (request.idempotencyKey ?? given['idempotency-key'] ?? randomUUID())
  const apiKey = request.apiKey === undefined ? options.apiKey : request.apiKey
  const headers: Record<string, string> = { accept: 'application/json', ...given }
  // The client's own key gives way to an Authorization header sent with the request.
  if (apiKey && (request.apiKey !== undefined || !headers.authorization)) headers.authorization = `Bearer ${apiKey}`
  if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey
  else delete headers['idempotency-key']
  for (const [name, value] of Object.entries(headers)) checkHeaderValue(name, value)
  const text = request.body === undefined ? undefined : JSON.stringify(request.body)
  if (text !== undefined) headers['content-type'] = 'application/json'
  // Joined as text so a base URL with a path prefix keeps it.
  const url = `${options.baseUrl.replace(/\/+$/, '')}${request.path.startsWith('/') ? '' : '/'}${request.path}`
  return { url, headers, text, idempotencyKey }
}
