import { buildOpenApiDocument } from '../openapi/build-document.js'
import { H3, type H3Event, type HTTPMethod } from 'h3'
import type { Storage } from 'unstorage'
import type { SandboxConfig } from '../domain/types.js'
import { maskApiKey } from '../keys/keys-file.js'
import { createKeyedMutex } from '../storage/keyed-mutex.js'
import { createSandboxStorage, parseStorageKind } from '../storage/create-storage.js'
import { StorageError } from '../storage/storage-error.js'
import { ApiError } from './api-error.js'
import { createAuthenticator, deriveKeyId, type EndedSession } from './auth.js'
import { resolveConfig, type DeepPartial } from './config.js'
import { parseForwardSecret, parseForwardUrl } from '../webhooks/forward-url.js'
import { SetupError } from '../errors/setup-error.js'
import { loadFixtures } from './fixtures.js'
import { answerWithoutRoute, handleApiRequest, type RouteSpec } from './pipeline.js'
import { createRateLimiter, DEFAULT_RATE_LIMIT, type RateLimit } from './rate-limiter.js'
import { createRequestLog, MEMORY_REQUEST_LOG_LIMIT, REQUEST_LOG_LIMIT, type RequestLogEntry } from './request-log.js'
import { createLoanRoutes } from './routes/loan-routes.js'
import { createPartnerRoutes } from './routes/partner-routes.js'
import type { SandboxServices } from './services.js'
import { createSessionStore } from './session-store.js'
import { sessionSlotOf } from './session-doc.js'
import { createWebhookRoutes } from './routes/webhook-routes.js'
import { DEFAULT_RETRY_SCHEDULE_MS } from '../webhooks/deliveries.js'
import { createDispatcher, type DeliveryReport } from '../webhooks/dispatcher.js'
import { generateWebhookSecret } from '../webhooks/signature.js'
import { createFaultPlan } from '../faults/fault-plan.js'
import { parseFaults, type FaultsConfig } from '../faults/faults-schema.js'
import { wasDropped } from './fault-hook.js'

const FORWARD_SECRET_KEY = 'webhooks:forward-secret'

/**
 * The forward secret, created once and kept in storage so receivers keep working across restarts.
 * A stored value of another form (a newer version's) is refused rather than replaced: replaced,
 * it would be lost to that version, whose receivers check deliveries with it.
 */
async function loadForwardSecret(storage: Storage): Promise<string> {
  const stored = await storage.getItem<unknown>(FORWARD_SECRET_KEY)
  if (typeof stored === 'string' && stored.startsWith('whsec_')) return stored
  if (stored !== null && stored !== undefined) {
    throw new StorageError(`the stored --webhook-forward-to secret is not one this version reads (a "whsec_..." text): a newer sandbox may have written it. It is left as it is: use that newer version again, or delete it (webhooks/forward-secret in the data dir, sandbox:webhooks:forward-secret in redis) to have a new one made, which receivers then need`)
  }
  const secret = generateWebhookSecret()
  await storage.setItem(FORWARD_SECRET_KEY, secret)
  return secret
}

/** Options of createSandbox; every one has a default that works out of the box. */
export interface SandboxOptions {
  /**
   * `fs` (under dataDir), `memory` (default for library use), a redis server's URL
   * (`redis://host:port/db`), or a ready unstorage instance.
   */
  storage?: 'fs' | 'memory' | RedisUrl | Storage
  /** Where fs storage lives; default `.sandbox`. */
  dataDir?: string
  /** Deep-merged over fixtures/config.json. */
  config?: DeepPartial<SandboxConfig>
  /** How `config` is named in its errors (default "config overrides"; serve: `--config FILE`). */
  configSource?: string
  /** Registered-keys mode: only keys in this file are accepted. Open mode without it. */
  keysFile?: string
  /** Requests per window per key; `false` turns the limit off. Default 120/60. */
  rateLimit?: RateLimit | false
  /** Called once per answered request (the CLI prints these). */
  onRequest?: (entry: RequestLogEntry) => void
  /** Gives `onRequest` each request's body and its answer's (`request_body`, `response_body`): `serve --log-bodies`. */
  logBodies?: boolean
  /** Told when a redis connection is lost (`up` false) and when it is back; default a line on stderr. */
  onStorageStatus?: (message: string, up: boolean) => void
  /** Where unexpected errors go; default console.error. */
  logError?: (error: unknown) => void
  /** `--allow-local-webhooks`: accept http and local/private webhook URLs (development only). */
  allowLocalWebhooks?: boolean
  /** `--webhook-forward-to`: also deliver every key's events, signed, to this URL. */
  webhookForwardTo?: string
  /**
   * `--webhook-forward-secret`: sign the forward deliveries with this `whsec_` secret rather than
   * the one kept in storage (which is left as it is); needs `webhookForwardTo`.
   */
  webhookForwardSecret?: string
  /** Delays after the first attempt, in ms; default 5 s, 30 s, 2 min, 10 min. */
  webhookRetrySchedule?: number[]
  /** Delivery timeout in ms; default 10 s. */
  webhookTimeoutMs?: number
  /** Called after each delivery attempt (the CLI prints these). */
  onDelivery?: (report: DeliveryReport) => void
  /** Host name resolver for webhook URL checks (tests inject one; default: the system's DNS). */
  resolveHost?: (host: string) => Promise<string[]>
  /**
   * Fault injection (`serve --faults FILE`, a sandbox extension): requests to fail, slow down or
   * cut on purpose. Validated like the file; off when absent.
   */
  faults?: FaultsConfig
  /** How `faults` is named in its errors (default "faults"; serve: `--faults FILE`). */
  faultsSource?: string
}

/** A redis server's URL, with its database number as the path: `redis://127.0.0.1:6379/0`. */
export type RedisUrl = `redis://${string}` | `rediss://${string}`

/** A running sandbox: an h3 app plus the state behind it. */
export interface Sandbox {
  app: H3
  fetch(request: Request): Promise<Response>
  storage: Storage
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
  /** Waits for in-flight writes, flushes the request log and closes storage. */
  close(): Promise<void>
}

const ROUTE_PREFIX = '/api/sandbox'

/**
 * Creates the sandbox server: the whole `/api/sandbox/*` partner API as an h3 app. Rejects with
 * SetupError for a bad config or keys file, and StorageError for storage it cannot open or own.
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const forwardTo = options.webhookForwardTo === undefined ? undefined : parseForwardUrl(options.webhookForwardTo)
  const givenSecret = options.webhookForwardSecret === undefined ? undefined : parseForwardSecret(options.webhookForwardSecret)
  if (givenSecret !== undefined && forwardTo === undefined) throw new SetupError('--webhook-forward-secret signs the deliveries of --webhook-forward-to: give that URL too')
  const fixtures = loadFixtures()
  const config = resolveConfig(fixtures.config, options.config, options.configSource)
  const faults = options.faults === undefined ? undefined : createFaultPlan(parseFaults(options.faults, options.faultsSource))
  // Sessions that `sandbox keys reset` ended are deleted by the server, which owns the storage: a
  // tool's delete could be undone by a write still in the journal, and cannot reach memory storage.
  let endSessions: (ended: EndedSession[]) => void = () => {}
  const auth = await createAuthenticator({ keysFile: options.keysFile, onSessionsEnded: (ended) => endSessions(ended), onKeysFileProblem: (error) => logError(error) })
  const storage = typeof options.storage === 'object'
    ? options.storage
    : await createSandboxStorage({
      kind: parseStorageKind(options.storage ?? 'memory'),
      dataDir: options.dataDir ?? '.sandbox',
      owner: true,
      url: options.storage,
      onStatus: options.onStorageStatus,
    })
  let forwardSecret: string | undefined
  try {
    forwardSecret = forwardTo ? givenSecret ?? await loadForwardSecret(storage) : undefined
  } catch (error) {
    // A storage opened here holds its lock or lease until disposed.
    if (typeof options.storage !== 'object') await storage.dispose().catch(() => {})
    throw error
  }
  const rule = options.rateLimit === undefined ? DEFAULT_RATE_LIMIT : options.rateLimit
  const rateLimiter = rule ? createRateLimiter(rule) : undefined
  const sweep = rateLimiter ? setInterval(() => rateLimiter.sweep(), 30_000) : undefined
  sweep?.unref()

  const logError = options.logError ?? ((error: unknown) => console.error(error))
  const sessions = createSessionStore(storage, { initialBalances: fixtures.wallet.balances, config })
  const mutex = createKeyedMutex()
  endSessions = (ended) => {
    for (const { apiKey, sessionId } of ended) {
      const principal = { apiKey, keyId: deriveKeyId(apiKey), sessionId }
      void mutex.run(sessionSlotOf(principal), () => sessions.remove(principal)).catch(logError)
    }
  }
  const dispatcher = createDispatcher({
    storage,
    sessions,
    mutex,
    retryScheduleMs: options.webhookRetrySchedule ?? DEFAULT_RETRY_SCHEDULE_MS,
    persistent: (options.storage ?? 'memory') !== 'memory',
    allowLocal: options.allowLocalWebhooks ?? false,
    forward: forwardTo ? { url: forwardTo, secret: forwardSecret! } : undefined,
    timeoutMs: options.webhookTimeoutMs,
    resolveHost: options.resolveHost,
    onDelivery: options.onDelivery,
    logError,
  })
  const services: SandboxServices = {
    config,
    fixtures,
    auth,
    rateLimiter,
    rateLimitWindowSeconds: rule ? rule.windowSeconds : 0,
    sessions,
    mutex,
    requestLog: createRequestLog(storage, { limit: (options.storage ?? 'memory') === 'memory' ? MEMORY_REQUEST_LOG_LIMIT : REQUEST_LOG_LIMIT }),
    onRequest: options.onRequest,
    logBodies: options.logBodies ?? false,
    dispatcher,
    webhooks: { allowLocal: options.allowLocalWebhooks ?? false, resolve: options.resolveHost },
    logError,
    maskKey: maskApiKey,
    faults,
  }

  const app = new H3({
    // Errors that escape the pipeline (h3's own, e.g. a malformed URL) still get the envelope.
    onError: (error, event) => answerWithoutRoute(event, toEnvelopeError(error), services),
  })
  serveOpenApiDocument(app, services)
  registerRoutes(app, [...createLoanRoutes(), ...createWebhookRoutes(), ...createPartnerRoutes()], services)
  try {
    await dispatcher.resume()
  } catch (error) {
    // As for the forward secret above: a failed start gives back the lock or lease it took, or a
    // second start in the same process (a test, a library user's retry) found the dir in use.
    if (sweep) clearInterval(sweep)
    await dispatcher.close().catch(() => {})
    await services.requestLog.close().catch(() => {})
    if (typeof options.storage !== 'object') await storage.dispose().catch(() => {})
    throw error
  }

  let closing: Promise<void> | undefined
  return {
    app,
    fetch: async (request) => {
      const response = await app.fetch(request)
      // No socket to cut here: a dropped connection is fetch's own error for one.
      if (wasDropped(request)) throw new TypeError('fetch failed', { cause: new Error('the sandbox\'s fault injection dropped the connection') })
      return response
    },
    storage,
    config,
    forwardSecret,
    faultSeed: faults?.seed,
    deliveriesIdle: () => dispatcher.idle(),
    flush: () => Promise.all([services.requestLog.flush(), dispatcher.flush()]).then(() => undefined),
    close() {
      closing ??= (async () => {
        if (sweep) clearInterval(sweep)
        await dispatcher.close()
        await services.mutex.idle()
        await services.requestLog.close()
        await storage.dispose()
      })()
      return closing
    },
  }
}

function toEnvelopeError(error: { status?: number; message: string }): ApiError {
  if (error instanceof ApiError) return error
  if (error.status === 404) return new ApiError('NOT_FOUND', 'No such endpoint.')
  if (error.status && error.status < 500) return new ApiError('INVALID_REQUEST', error.message)
  return new ApiError('INTERNAL_ERROR', 'Unexpected sandbox error; see the server log.')
}

/** GET /api/sandbox/openapi.json: the contract, with no key needed (generated once, on first use). */
function serveOpenApiDocument(app: H3, services: SandboxServices): void {
  let text: string | undefined
  const path = `${ROUTE_PREFIX}/openapi.json`
  app.get(path, () => {
    text ??= JSON.stringify(buildOpenApiDocument())
    return new Response(text, { headers: { 'content-type': 'application/json; charset=utf-8', 'access-control-allow-origin': '*' } })
  })
  refuseOtherMethods(app, path, ['GET'], services)
}

/**
 * Registers every route, then a 405 (with `Allow`) for the other methods of each known path and
 * a 404 for everything else, all in the error envelope.
 */
function registerRoutes(app: H3, routes: Array<[string, string, RouteSpec]>, services: SandboxServices): void {
  // The router would match `/api/sandbox/loans/` to `/api/sandbox/loans`: a path the contract does
  // not have (decisions.md: unknown paths give 404), whose Idempotency-Key fingerprint differs from
  // the one without the slash. Refused here, so a client's stray slash shows up in the sandbox.
  // The path without the slash is named only when it is one of the API's.
  const known = [...new Set(routes.map(([, path]) => path)), `${ROUTE_PREFIX}/openapi.json`].map((path) => new RegExp(`^${path.replace(/:[^/]+/g, '[^/]+')}$`))
  app.use((event: H3Event, next) => {
    const path = event.url.pathname
    if (path.length < 2 || !path.endsWith('/')) return next()
    const bare = path.replace(/\/+$/, '')
    const hint = known.some((pattern) => pattern.test(bare))
      ? `No such endpoint: API paths have no trailing slash (${bare}).`
      : path.startsWith(`${ROUTE_PREFIX}/`) ? 'No such endpoint.' : `No such endpoint; the API lives under ${ROUTE_PREFIX}/.`
    return answerWithoutRoute(event, new ApiError('NOT_FOUND', hint, { path }), services)
  })
  const methodsByPath = new Map<string, string[]>()
  for (const [method, path, spec] of routes) {
    app.on(method as HTTPMethod, path, (event: H3Event) => handleApiRequest(event, spec, services))
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), method])
  }
  for (const [path, methods] of methodsByPath) refuseOtherMethods(app, path, methods, services)
  app.all('/**', (event: H3Event) => {
    const path = event.url.pathname
    const hint = path.startsWith(ROUTE_PREFIX) ? 'No such endpoint.' : `No such endpoint; the API lives under ${ROUTE_PREFIX}/.`
    return answerWithoutRoute(event, new ApiError('NOT_FOUND', hint, { path }), services)
  })
}

/** 405 METHOD_NOT_ALLOWED with `Allow` for the methods of `path` that have no route. */
function refuseOtherMethods(app: H3, path: string, methods: string[], services: SandboxServices): void {
  const allow = methods.join(', ')
  app.all(path, (event: H3Event) => answerWithoutRoute(event,
    new ApiError('METHOD_NOT_ALLOWED', `${event.req.method} is not allowed on ${path}; use ${allow}.`, { allowed_methods: methods }, { allow }), services))
}
