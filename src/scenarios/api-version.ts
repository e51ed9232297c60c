import { sendRequest } from '../client/send-request.js'
import type { TransportOptions } from '../client/request-types.js'
import { generateKey } from './scenario-context.js'

/** The partner API description version this package, its server and its scenarios are written for. */
export const SCENARIOS_API_VERSION = '0.3.0'

const ASK_TIMEOUT_MS = 2000

/**
 * The `api_version` that a server's GET config answers, asked once with the run's key (or a
 * generated one), unannounced and without retries; undefined when it cannot be read (the
 * scenarios then meet what is wrong themselves). Spec part 9: a breaking change comes as a new
 * version, so a run against a hosted sandbox that moved on can say why its scenarios may fail.
 */
export async function readServerApiVersion(baseUrl: string, transport: Omit<TransportOptions, 'baseUrl' | 'apiKey'>, apiKey: string | undefined, signal: AbortSignal | undefined): Promise<{ version: string | undefined; requests: number }> {
  try {
    // At most 2 s: a server that does not answer is the first scenario's to report, with its retries.
    const timeoutMs = Math.min(transport.timeoutMs ?? ASK_TIMEOUT_MS, ASK_TIMEOUT_MS)
    const answer = await sendRequest({ ...transport, ...(signal ? { signal } : {}), timeoutMs, retries: 0, onRetryWait: undefined, baseUrl, apiKey: apiKey ?? generateKey('version') }, { method: 'GET', path: '/api/sandbox/config' })
    const version: unknown = answer.status === 200 ? answer.body?.api_version : undefined
    return { version: typeof version === 'string' ? version : undefined, requests: answer.attempts }
  } catch {
    signal?.throwIfAborted()
    return { version: undefined, requests: 0 }
  }
}
