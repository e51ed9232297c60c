import { askConfigOnce, type RunTransport } from './ask-config.js'

/** The partner API description version this package, its server and its scenarios are written for. */
export const SCENARIOS_API_VERSION = '0.3.0'

/** A note at the end of a run is not worth a long wait for a server that stopped answering. */
const ASK_TIMEOUT_MS = 2000

/**
 * The `api_version` that a server's GET config answers, asked once with the run's key (or a
 * generated one); undefined when it cannot be read. Spec part 9: a breaking change comes as a new
 * version, so a run against a hosted sandbox that moved on can say why its scenarios may fail.
 */
export async function readServerApiVersion(baseUrl: string, transport: RunTransport, apiKey: string | undefined, signal: AbortSignal | undefined): Promise<{ version: string | undefined; requests: number }> {
  const answer = await askConfigOnce(baseUrl, transport, apiKey, signal, Math.min(transport.timeoutMs ?? ASK_TIMEOUT_MS, ASK_TIMEOUT_MS))
  const version: unknown = answer?.status === 200 ? answer.body?.api_version : undefined
  return { version: typeof version === 'string' ? version : undefined, requests: answer?.attempts ?? 0 }
}
