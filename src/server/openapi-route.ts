import type { H3 } from 'h3'
import { buildOpenApiDocument } from '../openapi/build-document.js'
import { ROUTE_PREFIX } from './register-routes.js'
import { refuseOtherMethods } from './refuse-other-methods.js'
import type { SandboxServices } from './services.js'

/** GET /api/sandbox/openapi.json: the contract, with no key needed (generated once, on first use). */
export function serveOpenApiDocument(app: H3, services: SandboxServices): void {
  let text: string | undefined
  const path = `${ROUTE_PREFIX}/openapi.json`
  app.get(path, () => {
    text ??= JSON.stringify(buildOpenApiDocument())
    return new Response(text, { headers: { 'content-type': 'application/json; charset=utf-8', 'access-control-allow-origin': '*' } })
  })
  refuseOtherMethods(app, path, ['GET'], services)
}
