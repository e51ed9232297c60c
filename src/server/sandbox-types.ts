import type { SandboxStorage } from '../storage/sandbox-storage.js'
import type { SandboxConfig } from '../domain/types.js'
import type { DeepPartial } from './config.js'
import type { RateLimit } from './rate-limiter.js'
import type { RequestLogEntry } from './request-log.js'
import type { DeliveryReport } from '../webhooks/delivery-report.js'
import type { FaultsConfig } from '../faults/faults-schema.js'

/** Options of createSandbox; every one has a default that works out of the box. */
export interface SandboxOptions {
  /**
   * `fs` (under dataDir), `memory` (default for library use), a redis server's URL
   * (`redis://host:port/db`), or a ready unstorage instance.
   */
  storage?: 'fs' | 'memory' | RedisUrl | SandboxStorage | undefined
  /** Where fs storage lives; default `.sandbox`. */
  dataDir?: string | undefined
  /** Deep-merged over fixtures/config.json. */
  config?: DeepPartial<SandboxConfig> | undefined
  /** How `config` is named in its errors (default "config overrides"; serve: `--config FILE`). */
  configSource?: string | undefined
  /** Registered-keys mode: only keys in this file are accepted. Open mode without it. */
  keysFile?: string | undefined
  /** Requests per window per key; `false` turns the limit off. Default 120/60. */
  rateLimit?: RateLimit | false | undefined
  /** Called once per answered request (the CLI prints these); an error it throws goes to `logError`, the answer unchanged. */
  onRequest?: ((entry: RequestLogEntry) => void) | undefined
  /** Gives `onRequest` each request's body and its answer's (`request_body`, `response_body`): `serve --log-bodies`. */
  logBodies?: boolean | undefined
  /** Told when a redis connection is lost (`up` false) and when it is back; default a line on stderr. */
  onStorageStatus?: ((message: string, up: boolean) => void) | undefined
  /** Where unexpected errors go; default console.error. */
  logError?: ((error: unknown) => void) | undefined
  /** `--allow-local-webhooks`: accept http and local/private webhook URLs (development only). */
  allowLocalWebhooks?: boolean | undefined
  /** `--webhook-forward-to`: also deliver every key's events, signed, to this URL. */
  webhookForwardTo?: string | undefined
  /**
   * `--webhook-forward-secret`: sign the forward deliveries with this `whsec_` secret rather than
   * the one kept in storage (which is left as it is); needs `webhookForwardTo`.
   */
  webhookForwardSecret?: string | undefined
  /** Delays after the first attempt, in ms; default 5 s, 30 s, 2 min, 10 min. */
  webhookRetrySchedule?: number[] | undefined
  /** Delivery timeout in ms; default 10 s. */
  webhookTimeoutMs?: number | undefined
  /** Called after each delivery attempt (the CLI prints these). */
  onDelivery?: ((report: DeliveryReport) => void) | undefined
  /** Host name resolver for webhook URL checks (tests inject one; default: the system's DNS). */
  resolveHost?: ((host: string) => Promise<string[]>) | undefined
  /**
   * Fault injection (`serve --faults FILE`, a sandbox extension): requests to fail, slow down or
   * cut on purpose. Validated like the file; off when absent.
   */
  faults?: FaultsConfig | undefined
  /** How `faults` is named in its errors (default "faults"; serve: `--faults FILE`). */
  faultsSource?: string | undefined
  /**
   * `serve --forget-idle-keys`: in open mode, delete the state of a key no request used for longer
   * than this many ms (its next request starts empty). Not with `keysFile`. Off when absent.
   */
  forgetIdleKeysMs?: number | undefined
  /** Told how many keys a sweep of `forgetIdleKeysMs` forgot, when it forgot any (the CLI prints it). */
  onKeysForgotten?: ((count: number) => void) | undefined
}

/** A redis server's URL, with its database number as the path: `redis://127.0.0.1:6379/0`. */
export type RedisUrl = `redis://${string}` | `rediss://${string}`

/**
 * The sandbox's h3 app, typed by the one method serving it needs (h3's `toNodeHandler` calls only
 * `fetch`): the package's declarations name none of h3's, which need lib ESNext.
 */
export interface SandboxApp {
  fetch(request: Request): Response | Promise<Response>
}

/** A running sandbox: an h3 app plus the state behind it. */
export interface Sandbox {
  app: SandboxApp
  fetch(request: Request): Promise<Response>
  storage: SandboxStorage
  config: SandboxConfig
  /** The secret `--webhook-forward-to` deliveries are signed with (kept across restarts). */
  forwardSecret: string | undefined
  /** The seed of the fault injection's `rate` rules (the file's, or one drawn at start); undefined when off. */
  faultSeed: number | undefined
  /** Resolves when no webhook delivery is in flight (tests and benchmarks wait on it). */
  deliveriesIdle(): Promise<void>
  /**
   * Writes now what is otherwise written a moment later: request log entries (every 500 ms) and
   * failed webhook attempts (within 1 s).
   */
  flush(): Promise<void>
  /**
   * Closes the listeners listenSandbox opened for it (waiting for their requests in flight), waits
   * for in-flight writes and webhook deliveries, flushes the request log and closes storage. A
   * second call waits for the first. Afterwards `fetch` and `listenSandbox` refuse it with an Error.
   */
  close(): Promise<void>
}
