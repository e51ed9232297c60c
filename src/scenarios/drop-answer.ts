import { createAttemptSignal } from '../client/abortable-wait.js'
import { SandboxConnectionError } from '../client/api-error.js'
import { prepareRequest } from '../client/prepare-request.js'
import { DEFAULT_TIMEOUT_MS } from '../client/send-request.js'
import type { ClientRequest, TransportOptions } from '../client/request-types.js'
import { listCauses } from '../client/error-causes.js'

/**
 * The server closed the connection after taking the request (undici's "other side closed", a
 * reset), as `serve --faults` drop_after or a crashing server does: the answer is lost either way.
 */
function isClosedByServer(error: unknown): boolean {
  return listCauses(error).some(({ code }) => code === 'UND_ERR_SOCKET' || code === 'ECONNRESET')
}

/**
 * Sends a request and closes the connection as soon as the answer's status line arrives, without
 * reading the body: what a partner sees when the connection drops after the server acted. Answers
 * the status the server had begun to send, or null when the server closed the connection before
 * any (the answer is lost as the step asked). Sent once: any other network error or no status
 * line within `timeoutMs` (a stalled server would otherwise hold the run forever) is a connection error.
 * `onAttempt` hears of it as of any request, its answer marked `bodyUnread`. An abort of `signal`
 * cuts the request off, rejecting with its reason.
 */
export async function sendDroppingAnswer(baseUrl: string, apiKey: string | null, request: ClientRequest, timeoutMs = DEFAULT_TIMEOUT_MS, onAttempt?: TransportOptions['onAttempt'], signal?: AbortSignal): Promise<number | null> {
  const attempt = createAttemptSignal(signal, timeoutMs, () => new DOMException('no answer in time', 'TimeoutError'))
  const wire = prepareRequest({ baseUrl, apiKey }, request)
  const { url, headers, text, idempotencyKey } = wire
  const sent = { ...request, idempotencyKey: idempotencyKey ?? undefined }
  const started = performance.now()
  try {
    const response = await fetch(url, { method: request.method, headers, body: text, signal: attempt.signal, redirect: 'manual' })
    attempt.abort()
    await response.body?.cancel().catch(() => {})
    const durationMs = Math.round((performance.now() - started) * 100) / 100
    onAttempt?.(sent, { status: response.status, headers: response.headers, body: undefined, text: '', requestId: response.headers.get('x-request-id'), errorCode: null, idempotencyKey, attempts: 1, durationMs, bodyUnread: true }, wire)
    return response.status
  } catch (error) {
    if (signal?.aborted) throw signal.reason
    onAttempt?.(sent, error as Error, wire)
    if (isClosedByServer(error)) return null
    throw new SandboxConnectionError(url, 1, { cause: error, timeoutMs })
  } finally {
    attempt.dispose()
  }
}
