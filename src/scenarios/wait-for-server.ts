import { createAttemptSignal, sleep } from '../client/abortable-wait.js'
import { findProxyRefusal, isProxyGatewayStatus } from '../client/error-causes.js'
import { toAnswer } from '../client/read-answer.js'
import { findCertificateError, isBlockedPortError, isGatewayError, isPlainHttpError } from '../client/retry-rules.js'

/** How often a server that does not answer yet is tried again. */
const POLL_MS = 200

/**
 * Waits until something answers HTTP at `baseUrl` (any status: the hosted sandbox may not serve
 * our OpenAPI path) or `timeoutMs` has passed, for a server started in the background just
 * before. Resolves whether it answered. A proxy's 502/503/504 (no `error_code` of the API, or the
 * same status to CONNECT) is no answer of the server: a proxy started before it (docker compose)
 * answers so until it is up. A server that is up but will not do as it stands (it redirects, its
 * TLS certificate is not trusted, it answers plain HTTP on an https:// URL), an HTTP proxy that
 * will not open a tunnel to it, or a port fetch refuses to connect to, ends the wait at once:
 * waiting does not change it, and the run's first request says what to fix. An abort of `signal`
 * ends the wait at once, rejecting with its reason.
 */
export async function waitForServer(baseUrl: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const left = deadline - performance.now()
    const attemptMs = Math.max(1, Math.min(2_000, left))
    const attempt = createAttemptSignal(signal, attemptMs, () => new DOMException('no answer in time', 'TimeoutError'))
    try {
      const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/api/sandbox/openapi.json`, { redirect: 'manual', signal: attempt.signal })
      // Only a gateway status is read: its body tells the API's own 503 from a proxy's page.
      const text = isProxyGatewayStatus(response.status) ? await response.text() : (await response.body?.cancel(), '')
      if (!isGatewayError(toAnswer(response.status, response.headers, text, 1, 0, null))) return true
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      const refusal = findProxyRefusal(error)
      // A proxy's 502/503/504 to CONNECT is the server behind it not up yet, as a proxy's page is.
      if (isPlainHttpError(error) || findCertificateError(error) || isBlockedPortError(error) || (refusal !== undefined && !isProxyGatewayStatus(refusal))) return true
    } finally {
      attempt.dispose()
    }
    const remaining = deadline - performance.now()
    if (remaining <= 0) return false
    await sleep(Math.min(POLL_MS, remaining), signal)
  }
}
