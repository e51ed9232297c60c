import type { DomainContext, SandboxConfig } from '../domain/types.js'
import type { Authenticator, Principal } from './auth.js'
import type { Fixtures } from './fixtures.js'
import type { RateLimiter } from './rate-limiter.js'
import type { RequestLog, RequestLogEntry } from './request-log.js'
import type { SessionStore } from './session-store.js'
import type { Dispatcher } from '../webhooks/dispatcher.js'
import { createId } from './ids.js'
import type { FaultPlan } from '../faults/fault-plan.js'
import type { KeyUse } from './key-use.js'

/** Serializes work per key (see src/storage/keyed-mutex.ts). */
export interface KeyedMutexLike {
  run<T>(key: string, fn: () => Promise<T>): Promise<T>
  idle(): Promise<void>
}

/** Everything a route and the pipeline use, built once per sandbox by createSandbox. */
export interface SandboxServices {
  config: SandboxConfig
  fixtures: Fixtures
  auth: Authenticator
  rateLimiter: RateLimiter | undefined
  rateLimitWindowSeconds: number
  sessions: SessionStore
  mutex: KeyedMutexLike
  requestLog: RequestLog
  onRequest: ((entry: RequestLogEntry) => void) | undefined
  /** Turns committed events into webhook deliveries and sends them. */
  dispatcher: Dispatcher
  /** Webhook settings of this server. */
  /** `forwardUrl`: `serve --webhook-forward-to`, where waiting forward deliveries go next. */
  webhooks: { allowLocal: boolean; resolve?: (host: string) => Promise<string[]>; forwardUrl?: string | undefined }
  /** `serve --log-bodies`: give onRequest the request's and the answer's body. */
  logBodies?: boolean
  /** `serve --faults`: which requests to fail on purpose; undefined when off. */
  faults?: FaultPlan | undefined
  /** `serve --forget-idle-keys`: records each key's use; undefined when off. */
  keyUse?: KeyUse | undefined
  /** Aborted once the sandbox's close() is called: waits a request makes (a `latency` fault) end then. */
  closing?: AbortSignal
  logError(error: unknown): void
  maskKey(apiKey: string): string
}

/** The pure domain's view of the outside world for one request. */
export function createDomainContext(services: SandboxServices, principal: Principal): DomainContext {
  return {
    now: new Date().toISOString(),
    newId: createId,
    keySeed: principal.keyId,
    config: services.config,
    requiredConfirmations: services.fixtures.wallet.required_confirmations,
  }
}
