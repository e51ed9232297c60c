import type { ClientAnswer } from './request-types.js'
import { isGatewayError } from './retry-rules.js'

/**
 * Why an error answer without the API's `error_code` (every error of the API carries one) is not
 * the API's, worded to follow `answered 404`; undefined for a redirect, whose Location says more.
 * Without it, a web app's 404 on the base URL's port read as the API saying the path was unknown.
 */
export function describeForeignAnswer(answer: Pick<ClientAnswer, 'status' | 'errorCode' | 'attempts'>, baseUrl: string): string | undefined {
  if (answer.errorCode !== null || (answer.status >= 300 && answer.status < 400)) return undefined
  if (isGatewayError(answer)) {
    const times = answer.attempts === 1 ? 'once' : `${answer.attempts} times`
    return `a proxy in front of the server answered ${times}, not the sandbox API's JSON: the server behind it is down, restarting or too slow for the proxy`
  }
  const foreign = 'not the sandbox API\'s JSON (no error_code)'
  return `${foreign}: ${answer.status === 429 || answer.status >= 500 ? describeProxyAnswer(answer.status) : askBaseUrl(baseUrl)}`
}

/**
 * Who answered a 5xx or 429 that is not the API's: a proxy, load balancer (or, for a 429, a CDN's
 * own rate limit) in front of the server, which says nothing of a wrong base URL.
 */
export function describeProxyAnswer(status: number): string {
  return status === 429 ? 'a proxy, load balancer or CDN in front of the server answered for it' : 'a proxy or load balancer in front of the server answered for it'
}

/** The question an answer that is not the API's raises about the base URL (BASE_URL, when named): another service answers there. */
export function askBaseUrl(baseUrl?: string): string {
  return `is the base URL ${baseUrl === undefined ? '' : `${baseUrl.replace(/\/+$/, '')} `}the root of a sandbox server (its path prefix included), not a web app or another service?`
}
