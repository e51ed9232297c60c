import type { FaultRule } from './faults-schema.js'
import { findClosestMatch } from '../text/closest-match.js'

/** A route as the server registers it: method and path, `:name` for a path parameter. */
export type RouteSignature = readonly [method: string, path: string]

/** Where every route's path starts (register-routes.ts's ROUTE_PREFIX; kept apart to stay pure). */
const API_PREFIX = '/api/sandbox'

/**
 * Whether a request path of ROUTE can be PATH, or with `prefix`, begin with it: a path
 * parameter takes any one non-empty segment.
 */
function canMatch(route: string, path: string, prefix: boolean): boolean {
  const routeParts = route.split('/')
  const parts = path.split('/')
  if (prefix ? parts.length > routeParts.length : parts.length !== routeParts.length) return false
  return parts.every((part, index) => {
    const wanted = routeParts[index]!
    const partial = prefix && index === parts.length - 1
    if (wanted.startsWith(':')) return partial || part !== ''
    return partial ? wanted.startsWith(part) : wanted === part
  })
}

/**
 * The first rule that can fault no request, as `rules.N.field: why`, or undefined: a path no
 * route has (a typo, or `/loans/flow` without `/api/sandbox`), or a method its routes do not
 * take. Such a rule was taken without a word, and a CI job "survived" a fault it never got.
 * `alsoKnown` are paths that are the API's but never faulted (the OpenAPI document): no mistake.
 */
export function findUnreachableRule(rules: readonly FaultRule[], routes: readonly RouteSignature[], alsoKnown: readonly string[] = []): string | undefined {
  for (const [index, rule] of rules.entries()) {
    if (rule.path === undefined) continue
    const prefix = rule.path.endsWith('*')
    const path = prefix ? rule.path.slice(0, -1) : rule.path
    if (!prefix && alsoKnown.includes(path)) continue
    const matching = routes.filter(([, route]) => canMatch(route, path, prefix))
    if (matching.length === 0) {
      return `rules.${index}.path: no API route has ${prefix ? 'a path starting with' : 'the path'} ${path}, so the rule would never fault a request${prefix ? '' : suggestPath(path, routes)}`
    }
    if (rule.method !== undefined && !matching.some(([method]) => method === rule.method)) {
      const methods = [...new Set(matching.map(([method]) => method))]
      return `rules.${index}.method: no API route answers ${rule.method} ${path}${prefix ? '*' : ''} (its ${methods.length === 1 ? 'method' : 'methods'}: ${methods.join(', ')}), so the rule would never fault a request`
    }
  }
  return undefined
}

/** ` (did you mean ...?)` for a path missing the API's prefix or misspelt, or nothing. */
function suggestPath(path: string, routes: readonly RouteSignature[]): string {
  if (!path.startsWith(`${API_PREFIX}/`) && routes.some(([, route]) => canMatch(route, `${API_PREFIX}${path}`, false))) {
    return ` (did you mean ${API_PREFIX}${path}? API paths start with ${API_PREFIX})`
  }
  const meant = findClosestMatch(path, [...new Set(routes.map(([, route]) => route))])
  return meant === undefined ? '' : ` (did you mean ${meant}?)`
}
