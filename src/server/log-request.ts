import type { H3Event } from 'h3'
import type { Principal } from './auth.js'
import { readLoggedBody } from './body.js'
import { clipLoggedText, type RequestLogEntry } from './request-log.js'
import type { SandboxServices } from './services.js'

/** A key the request presented that the sandbox knows (auth.identifyKnownKey). */
export type KnownKey = Pick<Principal, 'apiKey' | 'keyId'>

/**
 * Logs an answered request under its key: the authenticated one, or for a refused or route-less
 * request a key the sandbox knows (a revoked key's 401s show in `sandbox logs --key`). `serve`
 * prints every request; one with no known key is not stored.
 */
export function logRequest(event: H3Event, services: SandboxServices, known: KnownKey | undefined, answered: { requestId: string; status: number; errorCode: string | null; durationMs: number; fault?: string | undefined; ignoredFields?: string[] | undefined; replayed?: boolean | undefined }, response: string): void {
  const apiKey = known?.apiKey
  const entry: RequestLogEntry = {
    request_id: answered.requestId,
    at: new Date().toISOString(),
    key: apiKey ? services.maskKey(apiKey) : null,
    method: event.req.method,
    path: clipLoggedText(event.url.pathname),
    status: answered.status,
    error_code: answered.errorCode,
    idempotency_key: clipLoggedText(event.req.headers.get('idempotency-key')),
    duration_ms: Math.round(answered.durationMs * 100) / 100,
    // Only on faulted requests: without --faults an entry is as it ever was.
    ...(answered.fault === undefined ? {} : { fault: answered.fault }),
    ...(answered.ignoredFields === undefined ? {} : { ignored_fields: answered.ignoredFields }),
    ...(answered.replayed ? { idempotency_replayed: true as const } : {}),
  }
  if (known) services.requestLog.record(known.keyId, entry)
  if (!services.onRequest) return
  if (!services.logBodies) return tellOnRequest(services, entry)
  // Bodies go to the live log only: the stored per-key log keeps its fixed-size entries.
  const requestBody = readLoggedBody(event)
  tellOnRequest(services, { ...entry, ...(requestBody ? { request_body: requestBody } : {}), response_body: response })
}

// The request has been carried out by now: an error of the caller's callback (a test's failed
// expect) turned its answer into an empty 500, and a retry then found the change already made.
function tellOnRequest(services: SandboxServices, entry: RequestLogEntry): void {
  try {
    services.onRequest?.(entry)
  } catch (error) {
    services.logError(error)
  }
}
