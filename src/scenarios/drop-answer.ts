import type { ClientRequest } from '../client/send-request.js'

/**
 * Sends a request and closes the connection as soon as the answer's status line arrives, without
 * reading the body: what a partner sees when the connection drops after the server acted. Answers
 * the status the server had begun to send.
 */
export async function sendDroppingAnswer(baseUrl: string, apiKey: string | null, request: ClientRequest): Promise<number> {
  const controller = new AbortController()
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (apiKey) headers.authorization = `Bearer ${apiKey}`
  if (request.idempotencyKey) headers['idempotency-key'] = request.idempotencyKey
  const response = await fetch(`${baseUrl.replace(/\/+$/, '')}${request.path}`, {
    method: request.method,
    headers,
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    signal: controller.signal,
  })
  controller.abort()
  await response.body?.cancel().catch(() => {})
  return response.status
}
