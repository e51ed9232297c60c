import { ApiError } from '../api-error.js'
import type { RouteSpec } from '../pipeline.js'

const PENDING = [
  ['GET', '/api/sandbox/partner'],
  ['POST', '/api/sandbox/partner'],
  ['GET', '/api/sandbox/webhooks'],
  ['POST', '/api/sandbox/webhooks'],
  ['DELETE', '/api/sandbox/webhooks'],
  ['POST', '/api/sandbox/webhooks/test'],
  ['POST', '/api/sandbox/webhooks/retry'],
] as const

/**
 * The partner and webhook endpoints, which the next release completes: they authenticate like
 * every endpoint and then answer 501 NOT_IMPLEMENTED, so a client can tell "not yet" from "wrong".
 */
export function createStubRoutes(): Array<[string, string, RouteSpec]> {
  return PENDING.map(([method, path]) => [method, path, {
    kind: 'stub',
    error: new ApiError('NOT_IMPLEMENTED', `${method} ${path} is not implemented by this sandbox version yet.`),
  }])
}
