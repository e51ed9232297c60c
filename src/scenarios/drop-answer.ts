import { SandboxConnectionError } from '../client/api-error.js'
import { DEFAULT_TIMEOUT_MS, prepareRequest, type ClientRequest } from '../client/send-request.js'

/**
 * Sends a request and closes the connection as soon as the answer's status line arrives, without
 * reading the body: what a partner sees when the connection drops after the server acted. Answers
 * the status the server had begun to send. Sent once: a network error or no status line within
 * `timeoutMs` (a stalled server would otherwise hold the run forever) is a connection error.
 */
export async function sendDroppingAnswer(baseUrl: string, apiKey: string | null, request: ClientRequest, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<number> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(new DOMException('no answer in time', 'TimeoutError')), timeoutMs)
  const { url, headers, text } = prepareRequest({ baseUrl, apiKey }, request)
  try {
    const response = await fetch(url, { method: request.method, headers, body: text, signal: controller.signal, redirect: 'manual' })
    controller.abort()
    await response.body?.cancel().catch(() => {})
    return response.status
  } catch (error) {
    throw new SandboxConnectionError(url, 1, { cause: error, timeoutMs })
  } finally {
    clearTimeout(timer)
  }
}
