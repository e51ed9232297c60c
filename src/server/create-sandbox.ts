import { setMaxListeners } from 'node:events'
import { H3 } from 'h3'
import { maskApiKey } from '../keys/api-key-text.js'
import { createKeyedMutex } from '../storage/keyed-mutex.js'
import { createSandboxStorage, parseStorageKind } from '../storage/create-storage.js'
import { ApiError } from './api-error.js'
import { createAuthenticator, deriveKeyId, type EndedSession } from './auth.js'
import { resolveConfig } from './config.js'
import { parseForwardSecret, parseForwardUrl } from '../webhooks/forward-url.js'
import { SetupError } from '../errors/setup-error.js'
import { loadFixtures } from './fixtures.js'
import { loadForwardSecret } from './forward-secret.js'
import { serveOpenApiDocument } from './openapi-route.js'
import { answerWithoutRoute } from './pipeline.js'
import { FIRST_IDEMPOTENCY_SWEEP_MS, startIdempotencyExpiry } from './idempotency-expiry.js'
import { chooseForgetStepMs, startForgettingIdleKeys } from './forget-idle-keys.js'
import { createKeyUse } from './key-use.js'
import { createRateLimiter, DEFAULT_RATE_LIMIT } from './rate-limiter.js'
import { registerRoutes, ROUTE_PREFIX } from './register-routes.js'
import { createRequestLog, MEMORY_REQUEST_LOG_LIMIT, REQUEST_LOG_LIMIT } from './request-log.js'
import { createLoanRoutes } from './routes/loan-routes.js'
import { createPartnerRoutes } from './routes/partner-routes.js'
import type { Sandbox, SandboxOptions } from './sandbox-types.js'
import type { SandboxServices } from './services.js'
import { createSessionStore } from './session-store.js'
import { IDEMPOTENCY_RETENTION_MS, sessionSlotOf } from './session-doc.js'
import { createWebhookRoutes } from './routes/webhook-routes.js'
import { DEFAULT_RETRY_SCHEDULE_MS } from '../webhooks/retry-schedule.js'
import { checkNumberOptions } from './check-options.js'
import { createDispatcher } from '../webhooks/dispatcher.js'
import { createFaultPlan } from '../faults/fault-plan.js'
import { parseFaults, type FaultsConfig } from '../faults/faults-schema.js'
import { findUnreachableRule } from '../faults/fault-routes.js'
import { wasDropped } from './fault-hook.js'
import { joinUnwritten, UnwrittenError } from '../storage/unwritten-error.js'
import { DataDirGoneError } from '../storage/storage-error.js'
import { closeListenersOf, createSandboxClosedError } from './sandbox-listeners.js'

/**
 * Creates the sandbox server: the whole `/api/sandbox/*` partner API as an h3 app. Rejects with
 * SetupError for a bad config or keys file, and StorageError for storage it cannot open or own.
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  checkNumberOptions(options)
  const forwardTo = options.webhookForwardTo === undefined ? undefined : parseForwardUrl(options.webhookForwardTo)
  const givenSecret = options.webhookForwardSecret === undefined ? undefined : parseForwardSecret(options.webhookForwardSecret)
  if (givenSecret !== undefined && forwardTo === undefined) throw new SetupError('--webhook-forward-secret signs the deliveries of --webhook-forward-to: give that URL too')
  if (options.forgetIdleKeysMs !== undefined && options.keysFile !== undefined) {
    throw new SetupError('forgetIdleKeysMs forgets the keys of open mode; keys of keysFile keep their state until "sandbox keys reset" or "sandbox keys revoke": drop one of the two')
  }
  const fixtures = loadFixtures()
  const config = resolveConfig(fixtures.config, options.config, options.configSource)
  const routes = [...createLoanRoutes(), ...createWebhookRoutes(), ...createPartnerRoutes()]
  const faults = options.faults === undefined ? undefined : createFaultPlan(checkFaultRoutes(parseFaults(options.faults, options.faultsSource), routes, options.faultsSource))
  const logError = options.logError ?? ((error: unknown) => console.error(error))
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
      onCheckpointError: (error) => logError(error),
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

  const sessions = createSessionStore(storage, { initialBalances: fixtures.wallet.balances, config })
  const mutex = createKeyedMutex()
  const idleMs = options.forgetIdleKeysMs
  const keyUse = idleMs === undefined ? undefined : createKeyUse(storage, { stepMs: chooseForgetStepMs(idleMs) })
  const persistent = (options.storage ?? 'memory') !== 'memory'
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
    persistent,
    allowLocal: options.allowLocalWebhooks ?? false,
    forward: forwardTo ? { url: forwardTo, secret: forwardSecret! } : undefined,
    timeoutMs: options.webhookTimeoutMs,
    resolveHost: options.resolveHost,
    onDelivery: options.onDelivery,
    logError,
  })
  const closingController = new AbortController()
  // One listener per request waiting out a latency fault: more than 10 at once is no leak.
  setMaxListeners(0, closingController.signal)
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
    webhooks: { allowLocal: options.allowLocalWebhooks ?? false, resolve: options.resolveHost, forwardUrl: forwardTo },
    logError,
    maskKey: maskApiKey,
    faults,
    keyUse,
    closing: closingController.signal,
  }

  const app = new H3({
    // Errors that escape the pipeline (h3's own, e.g. a malformed URL) still get the envelope.
    onError: (error, event) => answerWithoutRoute(event, toEnvelopeError(error, event), services),
  })
  serveOpenApiDocument(app, services)
  registerRoutes(app, routes, services)
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

  // Memory storage starts empty, so nothing in it expires before the server has run 24 hours.
  const expiry = startIdempotencyExpiry({ sessions, mutex, firstMs: persistent ? FIRST_IDEMPOTENCY_SWEEP_MS : IDEMPOTENCY_RETENTION_MS })
  // Stored keys are swept at once (fs, redis): their idle time counts from the use storage holds.
  const forgetting = keyUse && startForgettingIdleKeys({
    idleMs: idleMs!, sessions, keyUse, mutex, logError,
    firstMs: persistent ? 0 : chooseForgetStepMs(idleMs!),
    onForgotten: options.onKeysForgotten,
  })
  let closing: Promise<void> | undefined
  return {
    app,
    fetch: async (request) => {
      // Its storage is closed, or closing: a write now would land in a data dir it no longer owns.
      if (closing) throw createSandboxClosedError('sandbox.fetch')
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
        // Requests waiting out a latency fault answer now, so the listeners' close need not cut them.
        closingController.abort()
        // Before storage starts closing, so that no request comes in then.
        await closeListenersOf(app)
        if (sweep) clearInterval(sweep)
        await expiry.stop()
        await forgetting?.stop()
        // What storage refused to the end (redis gone) is lost: the close still ends, then says what.
        const unwritten: UnwrittenError[] = []
        const keepUnwritten = (error: unknown) => {
          if (!(error instanceof UnwrittenError)) throw error
          // A data dir deleted to start afresh (`rm -rf .sandbox`) took its log and records with it.
          if (!(error.cause instanceof DataDirGoneError)) unwritten.push(error)
        }
        await dispatcher.close().catch(keepUnwritten)
        await services.mutex.idle()
        await services.requestLog.close().catch(keepUnwritten)
        await storage.dispose()
        const lost = joinUnwritten(unwritten)
        if (lost) throw lost
      })()
      return closing
    },
  }
}

/** Where h3 marks a path whose percent-encoding does not decode; it then answers 400 "Bad Request". */
const MALFORMED_URL = Symbol.for('h3.internal.event.malformed')

function toEnvelopeError(error: { status?: number; message: string }, event: object): ApiError {
  if (error instanceof ApiError) return error
  if (error.status === 404) return new ApiError('NOT_FOUND', 'No such endpoint.')
  if (error.status === 400 && (event as Record<symbol, unknown>)[MALFORMED_URL]) {
    return new ApiError('INVALID_REQUEST', 'The path is not valid percent-encoding: each % must start a %XX escape of two hex digits, and the bytes they make must be UTF-8.', { field: 'path', issue: 'malformed percent-encoding' })
  }
  if (error.status && error.status < 500) return new ApiError('INVALID_REQUEST', error.message)
  return new ApiError('INTERNAL_ERROR', 'Unexpected sandbox error; see the server log.')
}

/** FAULTS, refused as parseFaults refuses a bad field when a rule can fault none of ROUTES' requests. */
function checkFaultRoutes(faults: FaultsConfig, routes: ReadonlyArray<readonly [string, string, unknown]>, source = 'faults'): FaultsConfig {
  const problem = findUnreachableRule(faults.rules, routes.map(([method, path]) => [method, path] as const), [`${ROUTE_PREFIX}/openapi.json`])
  if (problem) throw new SetupError(`${source} is not a valid fault injection file: ${problem}`)
  return faults
}
