import type { H3 } from 'h3'
import { buildOpenApiDocument } from '../openapi/build-document.js'
import { ROUTE_PREFIX } from './register-routes.js'
import { refuseOtherMethods } from './refuse-other-methods.js'
import type { SandboxServices } from './services.js'

/** Origins whose document text is kept: a server is reached by one or two names (127.0.0.1, localhost). */
const ORIGINS_KEPT = 4

/**
 * GET /api/sandbox/openapi.json: the contract, with no key needed. Its `servers` names the origin
 * the request reached (another port, https, a host name), so a tool that imports the served URL
 * (Postman, a mock, a generated client's base URL) calls this server, not the default port. The
 * text is made once per origin, on first use.
 */
export function serveOpenApiDocument(app: H3, services: SandboxServices): void {
  const texts = new Map<string, string>()
  const path = `${ROUTE_PREFIX}/openapi.json`
  app.get(path, (event) => {
    const origin = event.url.origin
    let text = texts.get(origin)
    if (text === undefined) {
      text = JSON.stringify(buildOpenApiDocument({ serverUrl: origin }))
      if (texts.size >= ORIGINS_KEPT) texts.delete(texts.keys().next().value!)
      texts.set(origin, text)
    }
    return new Response(text, { statusText: 'OK', headers: { 'content-type': 'application/json; charset=utf-8', 'access-control-allow-origin': '*' } })
  })
  refuseOtherMethods(app, path, ['GET'], services)
}
