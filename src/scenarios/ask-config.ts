import { sendRequest } from '../client/send-request.js'
import type { ClientAnswer, TransportOptions } from '../client/request-types.js'
import { generateKey } from './scenario-context.js'

/** Client settings of a run, as runScenarios passes them on. */
export type RunTransport = Omit<TransportOptions, 'baseUrl' | 'apiKey'>

/**
 * One GET /api/sandbox/config that the run asks for itself, with `apiKey` (or a generated one):
 * one attempt, unannounced, so that a server that cannot be reached is the scenarios' to report,
 * with every retry and line. Undefined when it got no answer.
 */
export async function askConfigOnce(baseUrl: string, transport: RunTransport, apiKey: string | undefined, signal: AbortSignal | undefined, timeoutMs = transport.timeoutMs): Promise<ClientAnswer | undefined> {
  try {
    return await sendRequest({ ...transport, ...(signal ? { signal } : {}), timeoutMs, retries: 0, onRetryWait: undefined, baseUrl, apiKey: apiKey ?? generateKey('probe') }, { method: 'GET', path: '/api/sandbox/config' })
  } catch {
    signal?.throwIfAborted()
    return undefined
  }
}

/**
 * Whether the server accepts only registered keys: one GET with a fresh generated key, refused
 * with 401 SANDBOX_API_KEY_INVALID by `serve --keys` and by nothing in open mode. Undefined when
 * the server could not be asked (the scenarios then meet the problem themselves).
 */
export async function probeRegisteredOnly(baseUrl: string, transport: RunTransport, signal: AbortSignal | undefined): Promise<{ registeredOnly: boolean | undefined; requests: number }> {
  const answer = await askConfigOnce(baseUrl, transport, undefined, signal)
  return { registeredOnly: answer && answer.status === 401 && answer.errorCode === 'SANDBOX_API_KEY_INVALID', requests: answer?.attempts ?? 0 }
}
