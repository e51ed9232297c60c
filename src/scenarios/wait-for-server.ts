import { setTimeout as sleep } from 'node:timers/promises'
import { findCertificateError, isPlainHttpError } from '../client/retry-rules.js'

/** How often a server that does not answer yet is tried again. */
const POLL_MS = 200

/**
 * Waits until something answers HTTP at `baseUrl` (any status: the hosted sandbox may not serve
 * our OpenAPI path) or `timeoutMs` has passed, for a server started in the background just
 * before. Resolves whether it answered; a TLS error that waiting cannot change counts as an answer.
 */
export async function waitForServer(baseUrl: string, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const left = deadline - performance.now()
    try {
      const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/api/sandbox/openapi.json`, { signal: AbortSignal.timeout(Math.max(1, Math.min(2_000, left))) })
      await response.body?.cancel()
      return true
    } catch (error) {
      // A plain-http server behind an https:// URL, or a certificate not trusted here, answers
      // alike until someone changes the URL or the trust: the run's first request says what to fix.
      if (isPlainHttpError(error) || findCertificateError(error) !== undefined) return true
      const remaining = deadline - performance.now()
      if (remaining <= 0) return false
      await sleep(Math.min(POLL_MS, remaining))
    }
  }
}
