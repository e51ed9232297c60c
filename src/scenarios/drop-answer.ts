import { prepareRequest, type ClientRequest } from '../client/send-request.js'

/**
 * Sends a request and closes the connection as soon as the answer's status line arrives, without
 * reading the body: what a partner sees when the connection drops after the server acted. Answers
 * the status the server had begun to send.
 */
export async function sendDroppingAnswer(baseUrl: string, apiKey: string | null, request: ClientRequest): Promise<number> {
  const controller = new AbortController()
  const { url, headers, text } = prepareRequest({ baseUrl, apiKey }, request)
  const response = await fetch(url, { method: request.method, headers, body: text, signal: controller.signal })
  controller.abort()
  await response.body?.cancel().catch(() => {})
  return response.status
}
