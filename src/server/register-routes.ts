import type { H3, H3Event, HTTPMethod } from 'h3'
import { ApiError } from './api-error.js'
import { answerWithoutRoute, handleApiRequest } from './pipeline.js'
import type { RouteSpec } from './route-types.js'
import { refuseOtherMethods } from './refuse-other-methods.js'
import type { SandboxServices } from './services.js'

/** Where the partner API lives: every route's path starts with it. */
export const ROUTE_PREFIX = '/api/sandbox'

/**
 * Registers every route, then a 405 (with `Allow`) for the other methods of each known path and
 * a 404 for everything else, all in the error envelope.
 */
export function registerRoutes(app: H3, routes: Array<[string, string, RouteSpec]>, services: SandboxServices): void {
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
