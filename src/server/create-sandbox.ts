import { H3, type H3Event, type HTTPMethod } from 'h3'
import type { Storage } from 'unstorage'
import type { SandboxConfig } from '../domain/types.js'
import { maskApiKey } from '../keys/keys-file.js'
import { createKeyedMutex } from '../storage/keyed-mutex.js'
import { createSandboxStorage } from '../storage/create-storage.js'
import { ApiError } from './api-error.js'
import { createAuthenticator } from './auth.js'
import { resolveConfig, type DeepPartial } from './config.js'
import { loadFixtures } from './fixtures.js'
import { answerWithoutRoute, handleApiRequest, type RouteSpec } from './pipeline.js'
import { createRateLimiter, DEFAULT_RATE_LIMIT, type RateLimit } from './rate-limiter.js'
import { createRequestLog, type RequestLogEntry } from './request-log.js'
import { createLoanRoutes } from './routes/loan-routes.js'
import { createStubRoutes } from './routes/stub-routes.js'
import type { SandboxServices } from './services.js'
import { createSessionStore } from './session-store.js'

/** Options of createSandbox; every one has a default that works out of the box. */
export interface SandboxOptions {
  /** `fs` (under dataDir), `memory` (default for library use), or a ready unstorage instance. */
  storage?: 'fs' | 'memory' | Storage
  /** Where fs storage lives; default `.sandbox`. */
  dataDir?: string
  /** Deep-merged over fixtures/config.json. */
  config?: DeepPartial<SandboxConfig>
  /** Registered-keys mode: only keys in this file are accepted. Open mode without it. */
  keysFile?: string
  /** Requests per window per key; `false` turns the limit off. Default 120/60. */
  rateLimit?: RateLimit | false
  /** Called once per answered request (the CLI prints these). */
  onRequest?: (entry: RequestLogEntry) => void
  /** Where unexpected errors go; default console.error. */
  logError?: (error: unknown) => void
}

/** A running sandbox: an h3 app plus the state behind it. */
export interface Sandbox {
  app: H3
  fetch(request: Request): Promise<Response>
  storage: Storage
  config: SandboxConfig
  /** Writes pending request log entries now (they are otherwise written every 500 ms). */
  flush(): Promise<void>
  /** Waits for in-flight writes, flushes the request log and closes storage. */
  close(): Promise<void>
}

const ROUTE_PREFIX = '/api/sandbox'

/** Creates the sandbox server: the whole `/api/sandbox/*` partner API as an h3 app. */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const fixtures = loadFixtures()
  const config = resolveConfig(fixtures.config, options.config)
  const auth = await createAuthenticator({ keysFile: options.keysFile })
  const storage = typeof options.storage === 'object'
    ? options.storage
    : await createSandboxStorage({ kind: options.storage ?? 'memory', dataDir: options.dataDir ?? '.sandbox', journal: true })
  const rule = options.rateLimit === undefined ? DEFAULT_RATE_LIMIT : options.rateLimit
  const rateLimiter = rule ? createRateLimiter(rule) : undefined
  const sweep = rateLimiter ? setInterval(() => rateLimiter.sweep(), 30_000) : undefined
  sweep?.unref()

  const services: SandboxServices = {
    config,
    fixtures,
    auth,
    rateLimiter,
    rateLimitWindowSeconds: rule ? rule.windowSeconds : 0,
    sessions: createSessionStore(storage, { initialBalances: fixtures.wallet.balances }),
    mutex: createKeyedMutex(),
    requestLog: createRequestLog(storage),
    onRequest: options.onRequest,
    onCommitted: undefined,
    logError: options.logError ?? ((error) => console.error(error)),
    maskKey: maskApiKey,
  }

  const app = new H3({
    // Errors that escape the pipeline (h3's own, e.g. a malformed URL) still get the envelope.
    onError: (error, event) => answerWithoutRoute(event, toEnvelopeError(error), services),
  })
  registerRoutes(app, [...createLoanRoutes(), ...createStubRoutes()], services)

  let closing: Promise<void> | undefined
  return {
    app,
    fetch: async (request) => app.fetch(request),
    storage,
    config,
    flush: () => services.requestLog.flush(),
    close() {
      closing ??= (async () => {
        if (sweep) clearInterval(sweep)
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

/**
 * Registers every route, then a 405 (with `Allow`) for the other methods of each known path and
 * a 404 for everything else, all in the error envelope.
 */
function registerRoutes(app: H3, routes: Array<[string, string, RouteSpec]>, services: SandboxServices): void {
  const methodsByPath = new Map<string, string[]>()
  for (const [method, path, spec] of routes) {
    app.on(method as HTTPMethod, path, (event: H3Event) => handleApiRequest(event, spec, services))
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), method])
  }
  for (const [path, methods] of methodsByPath) {
    const allow = methods.join(', ')
    app.all(path, (event: H3Event) => answerWithoutRoute(event,
      new ApiError('METHOD_NOT_ALLOWED', `${event.req.method} is not allowed on ${path}; use ${allow}.`, { allowed_methods: methods }, { allow }), services))
  }
  app.all('/**', (event: H3Event) => {
    const path = event.url.pathname
    const hint = path.startsWith(ROUTE_PREFIX) ? 'No such endpoint.' : `No such endpoint; the API lives under ${ROUTE_PREFIX}/.`
    return answerWithoutRoute(event, new ApiError('NOT_FOUND', hint, { path }), services)
  })
}
