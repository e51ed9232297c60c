/** The fields read off an error and its causes. */
export interface CauseLike {
  code?: unknown
  name?: unknown
  message?: unknown
  cause?: unknown
}

/**
 * An error and the causes nested under it, outermost first, at most five: undici wraps the
 * socket's or TLS's own error under "fetch failed", and ofetch wraps that again.
 */
export function listCauses(error: unknown): CauseLike[] {
  const causes: CauseLike[] = []
  let current = error as CauseLike | undefined
  for (let depth = 0; current && depth < 5; depth++, current = current.cause as CauseLike | undefined) causes.push(current)
  return causes
}

/**
 * The status an HTTP proxy refused a request with: 407 when it wants credentials, or the status it
 * answered a CONNECT with instead of opening a tunnel to an https:// URL (403 for a host it does
 * not let through). undici reports these as "Proxy Authentication Required (407)" and "Proxy
 * response (403) !== 200 when HTTP Tunneling". The proxy answers alike every time, so they are
 * not retried, save those of isProxyGatewayStatus.
 */
export function findProxyRefusal(error: unknown): number | undefined {
  for (const { message } of listCauses(error)) {
    const match = typeof message === 'string' ? /^Proxy (?:response \((\d{3})\) !== 200 when HTTP Tunneling|Authentication Required \((407)\)$)/.exec(message) : null
    if (match) return Number(match[1] ?? match[2])
  }
  return undefined
}

/**
 * Whether a proxy's answer to CONNECT says it could not reach the server (502, 503, 504: down,
 * restarting, a name it cannot resolve), as Squid answers: not a refusal of the host, so retried
 * like a network error, as the same statuses are when a proxy answers a plain http:// request.
 */
export function isProxyGatewayStatus(status: number | undefined): boolean {
  return status === 502 || status === 503 || status === 504
}
