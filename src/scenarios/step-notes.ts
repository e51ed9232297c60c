import { describeInjectedPage } from '../client/api-error.js'
import { parseRetryAfter } from '../client/read-answer.js'
import { isGatewayError } from '../client/retry-rules.js'
import { askBaseUrl, describeProxyAnswer } from '../client/foreign-answer.js'
import { DEFAULT_MAX_RETRY_AFTER_MS } from '../client/send-request.js'
import type { ClientAnswer, ClientRequest } from '../client/request-types.js'
import { IGNORED_FIELDS_HEADER } from '../server/ignored-fields.js'

// Notes a failed step carries: what most likely went wrong and what to do about it.

/** 401 codes that refuse the key itself, whatever the request: no later step can pass with it. */
const KEY_REFUSED_CODES = new Set(['SANDBOX_API_KEY_INVALID', 'SANDBOX_API_KEY_REQUIRED', 'SANDBOX_SESSION_REQUIRED'])

/**
 * A 409 for a draft or repayment operation the scenario did not open, on a key runs share: most
 * likely left by an earlier run that failed or was stopped, and every later run fails on it alike
 * until it is finished, so say which and how to get rid of it. Parallel CI jobs on one key meet
 * each other's drafts the same way, which finishing would break: the note says runs must not overlap.
 */
export function describeLeftover(answer: ClientAnswer, opened: { draft: boolean; operations: Set<string> }): string | undefined {
  const details = (answer.body?.details ?? {}) as Record<string, unknown>
  const fix = '`sandbox keys reset KEY` (a registered key) or a fresh key starts clean'
  if (details.reason === 'DRAFT_ALREADY_OPEN' && !opened.draft) {
    return `the key already had a draft open (application ${String(details.application_id)}, ${String(details.current_status)}; next: ${String(details.expected_action)}), most likely left by an earlier run on this shared key that failed or was stopped (or a run on this key going on now: runs sharing a key must not overlap): finish it (the shipped scenarios do, in their "leftover draft" steps), or ${fix}`
  }
  if (details.reason === 'OPERATION_IN_PROGRESS' && !opened.operations.has(String(details.operation_id))) {
    return `the loan already had repayment operation ${String(details.operation_id)} open (${String(details.current_status)}; next: ${String(details.expected_action)}), most likely left by an earlier run on this shared key that failed or was stopped (or a run on this key going on now: runs sharing a key must not overlap): finish it with the repayment flow, or ${fix}`
  }
  return undefined
}

/** A 401 that refuses one of the run's keys itself, where the step expected no 401. */
export function isKeyRefusal(answer: ClientAnswer, keyName: string, expectedStatus: number | undefined): boolean {
  return answer.status === 401 && expectedStatus !== 401 && keyName !== 'none' && KEY_REFUSED_CODES.has(answer.errorCode ?? '')
}

/**
 * What to do about a server refusing one of the run's keys, with the server's own reason (`The
 * API key is revoked.`): a registered-keys server refuses every generated key, and a given key
 * that is unknown, revoked, expired or without a session fails every scenario alike.
 */
export function describeKeyRefusal(answer: ClientAnswer, keyName: string, given: boolean, remote: boolean): string {
  const refusal = `401 ${answer.errorCode}${typeof answer.body?.error === 'string' ? `: ${answer.body.error}` : ''}`
  if (answer.errorCode === 'SANDBOX_API_KEY_REQUIRED') return `the server got no key although the run sent one (${refusal}); is a proxy in between dropping the Authorization header?`
  if (answer.errorCode === 'SANDBOX_SESSION_REQUIRED') return `the server has no session for the run's key (${refusal}): \`sandbox keys reset KEY\` recreates it`
  // The hosted sandbox's keys come from the partner dashboard; `sandbox keys` manages a local server's.
  if (given && remote) return `the server refuses the run's --api-key (${refusal}): use a key this server issued (for the hosted sandbox, from the partner dashboard; a key of another environment, or one made by \`sandbox keys create\` for a local server, is refused)`
  if (given) return `the server refuses the run's --api-key (${refusal}): check it with \`sandbox keys list\`, or create one with \`sandbox keys create\``
  const which = keyName === 'main' ? 'a fresh generated key' : `the scenario's generated key "${keyName}"`
  return `the server accepts only registered keys (${which} got ${refusal}): pass one with --api-key (\`sandbox keys create --keys FILE\` makes one)`
}

/** Why a step ended on a 429 it did not expect: a Retry-After above the run's longest wait, or every retry spent. */
export function describeRateLimit(answer: ClientAnswer, transport: { maxRetryAfterMs?: number | undefined } | undefined): string {
  const asked = Math.ceil(parseRetryAfter(answer.headers.get('retry-after')) / 1000)
  const max = Math.round((transport?.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS) / 1000)
  if (asked > max) return `rate limited: the server asks to wait ${asked} s (Retry-After), longer than the ${max} s a run waits at most; run again later, or against a server with a higher --rate-limit`
  // The spec names no Retry-After: a 429 without one was waited on for the client's 1 s, not what it asked.
  if (!answer.headers.has('retry-after')) return `still rate limited after ${answer.attempts} attempts: the 429 named no Retry-After, so each retry waited 1 s${answer.headers.has('ratelimit-reset') ? ` (RateLimit-Reset said ${answer.headers.get('ratelimit-reset')} s)` : ''}; run again later (another client may be using this key)`
  return `still rate limited after ${answer.attempts} attempts (each waited its Retry-After): another client may be using this key`
}

/**
 * A 3xx the client did not follow: the base URL has moved (http -> https, another host or path).
 * A relative Location (`/v2/api/...`, as nginx and many load balancers send) is told resolved
 * against the URL asked for: on its own it made a base URL to use of a bare path. Names the base
 * URL to use when the Location ends with the path that was asked for.
 */
export function describeRedirect(answer: ClientAnswer, request: ClientRequest, baseUrl: string): string {
  const given = answer.headers.get('location')
  if (!given) return `the server answered ${answer.status}, a redirect without a Location`
  const asked = `${baseUrl.replace(/\/+$/, '')}${request.path}`
  const location = URL.canParse(given, asked) ? new URL(given, asked).href : given
  const base = location.endsWith(request.path) ? location.slice(0, -request.path.length) : undefined
  return `the server answered ${answer.status}, a redirect to ${location}: redirects are not followed (a POST would come back as a GET, and the key is not sent to another origin); ${base ? `use --base-url ${base}` : 'fix --base-url'}`
}

/**
 * Texts of the 400 a TLS server answers to plain HTTP on its port: `sandbox serve --tls-cert`'s,
 * Go's and nginx's. Every request of the run would get it.
 */
const HTTPS_ONLY = /answers https only|HTTP request to an HTTPS server|plain HTTP request was sent to HTTPS port/i

/** For a 400 that says the server answers https only, to an http:// base URL: what to use instead. */
export function describeHttpsOnly(baseUrl: string, answer: ClientAnswer): string | undefined {
  if (answer.status !== 400 || !baseUrl.startsWith('http://') || !HTTPS_ONLY.test(answer.text)) return undefined
  return `cannot reach ${baseUrl}: the server there answers https only (400 to plain HTTP); use https:// rather than http:// (${baseUrl.replace(/^http:/, 'https:')})`
}

/** A proxy's 502/503/504 that outlasted the retries: the server behind it is down or restarting. */
export function describeGatewayError(answer: ClientAnswer, request: ClientRequest): string {
  const times = answer.attempts === 1 ? 'once (a POST without an Idempotency-Key is not sent again)' : `${answer.attempts} times`
  if (describeInjectedPage(answer)) return `${request.method} ${request.path}: serve --faults answered ${answer.status} ${times} with a proxy's page (a status rule), as a proxy in front of a server that is down would; not a proxy of yours`
  return `${request.method} ${request.path}: a proxy in front of the server answered ${answer.status} ${times}, not the sandbox's own JSON: the server behind it is down, restarting or too slow for the proxy`
}

/**
 * Why the runner's receiver got nothing, or was refused, when the sandbox is on another machine:
 * the receiver listens on this machine's loopback, which a remote sandbox cannot reach.
 */
export const REMOTE_WEBHOOK_NOTE = "the runner's receiver listens on 127.0.0.1 of this machine, which a sandbox on another machine cannot reach (nor, by the spec, accept as an endpoint): give a tunnel's public https URL to it with --receiver-url (and --receiver-port), or run the webhook scenarios against a local `sandbox serve --allow-local-webhooks`"

/**
 * A wait that got nothing while deliveries were to come through a tunnel: the tunnel is down, or
 * forwards somewhere else than the receiver, or the server could not reach it.
 */
export function describeTunnelSilence(inbox: { publicUrl?: string | undefined; localUrl: string }, timeoutMs: number): string {
  const local = inbox.localUrl.replace(/^http:\/\//, '')
  return `nothing arrived through the tunnel within ${timeoutMs} ms: check that it is running and forwards ${inbox.publicUrl}/* to ${local} (the receiver's address on this machine); the server's delivery log (GET /api/sandbox/webhooks) shows what its attempts got`
}

/** The server refused the --receiver-url as the key's endpoint (400 WEBHOOK_URL_INVALID). */
export function describeRefusedReceiverUrl(publicUrl: string, answer: ClientAnswer): string {
  const reason = typeof answer.body?.error === 'string' ? ` (${answer.body.error})` : ''
  return `the server refuses --receiver-url ${publicUrl} as an endpoint${reason}: a sandbox that keeps the spec takes only a public https:// URL, such as the tunnel's own`
}

/**
 * The body fields a sandbox server said it ignored (x-sandbox-ignored-fields): in a scenario
 * that is most often a misspelt field, whose step may pass anyway (an optional field left at its
 * default). Undefined when the server named none, as the hosted sandbox never does.
 */
export function describeIgnoredFields(answer: ClientAnswer): string | undefined {
  const header = answer.headers.get(IGNORED_FIELDS_HEADER)
  if (!header) return undefined
  const names = header.split(', ').map((name) => {
    try {
      return decodeURIComponent(name)
    } catch {
      return name
    }
  })
  return `the server ignored ${names.length === 1 ? 'the body field' : 'the body fields'} ${names.join(', ')}: not ${names.length === 1 ? 'a field' : 'fields'} of this request (a typo?)`
}

/**
 * NOTE with what infrastructure in front of the server did to a failed step, if it shows: an
 * answer that is no JSON at all, so not the API's (spec part 4: JSON bodies, each with
 * `request_id`): a web app's page, a load balancer's 404 for a path prefix the base URL lacks, an
 * empty body, which the failures alone (`expected 200, got 404`) read as the API's; or the
 * REQUEST's Idempotency-Key dropped on the way. A redirect or a proxy's 502/503/504 says so in its
 * own message; another 5xx page is a proxy's too, and so is a 429 page.
 */
export function addInfrastructureNote(note: string | undefined, answer: ClientAnswer, request?: ClientRequest): string | undefined {
  const dropped = request && describeDroppedIdempotencyKey(answer, request)
  if (dropped) return note ? `${note}; ${dropped}` : dropped
  if (answer.body !== undefined || answer.bodyUnread || (answer.status >= 300 && answer.status < 400) || isGatewayError(answer)) return note
  const type = answer.headers.get('content-type')
  const answered = answer.text === '' ? 'the answer is empty' : `the answer is not JSON${type ? ` (${type})` : ''}`
  // A 5xx page is a proxy's answer for a server behind it that failed, and a 429 page a CDN's or
  // proxy's own rate limit (Cloudflare's 1015): no sign of a wrong base URL.
  const what = answer.status >= 500 || answer.status === 429
    ? `${answered}, so not the sandbox API's own: ${describeProxyAnswer(answer.status)}`
    : `${answered}, so not the sandbox API's: ${askBaseUrl()}`
  return note ? `${note}; ${what}` : what
}

/**
 * A failed step's answer that is no JSON, neither a redirect, a 5xx nor a 429 (a proxy's, told
 * as such): the base URL reaches another service, most often one that held the port a `sandbox
 * serve` of the same job then could not take. Undefined for any other answer.
 */
export function describeForeignAnswer(baseUrl: string, request: ClientRequest, answer: ClientAnswer, remote: boolean): string | undefined {
  if (answer.body !== undefined || answer.bodyUnread || answer.status >= 500 || answer.status === 429 || (answer.status >= 300 && answer.status < 400)) return undefined
  const type = answer.headers.get('content-type')
  const what = answer.text === '' ? 'an empty body' : (type ?? 'a body that is not JSON')
  const question = `${request.method} ${request.path} answered ${answer.status} with ${what}, not the sandbox API's JSON: ${askBaseUrl(baseUrl)}`
  return remote ? question : `${question} A sandbox serve started for this run exits 2 when another process holds its port: its output says so`
}

/**
 * A 400 IDEMPOTENCY_KEY_REQUIRED to a POST the run sent a key with: an API gateway or proxy in
 * between dropped the header, as some drop headers they do not know. Every POST fails alike, and
 * the retries after a lost answer that the key makes safe are not.
 */
function describeDroppedIdempotencyKey(answer: ClientAnswer, request: ClientRequest): string | undefined {
  if (answer.errorCode !== 'IDEMPOTENCY_KEY_REQUIRED' || request.method !== 'POST' || !request.idempotencyKey) return undefined
  return 'the server got no Idempotency-Key although the run sent one; is a proxy or API gateway in between dropping the header?'
}
