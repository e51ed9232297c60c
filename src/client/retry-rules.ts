import { listCauses } from './error-causes.js'
import type { ClientAnswer, ClientRequest } from './request-types.js'

/**
 * Statuses a proxy or load balancer answers for a server behind it that is down, restarting or
 * slow: 502, 503, 504, and the 520-524 of Cloudflare, which a hosted sandbox may sit behind
 * (unknown error, origin down, connection timed out, origin unreachable, answer timed out). Not
 * its 525/526: a TLS setting between it and the server, which waiting does not change.
 */
const GATEWAY_STATUSES = new Set([502, 503, 504, 520, 521, 522, 523, 524])

/**
 * Whether sending `request` again cannot apply it twice: a GET or DELETE, or a POST that carries
 * an Idempotency-Key (the server replays its stored answer). A POST sent without one is never
 * retried: its lost attempt may have been carried out.
 */
export function isSafeToRetry(request: Pick<ClientRequest, 'method'>, idempotencyKey: string | null): boolean {
  return request.method !== 'POST' || Boolean(idempotencyKey)
}

/**
 * A 502, 503, 504 (or Cloudflare's 520-524) that is not the API's own JSON error (no `error_code`):
 * a proxy in front of the server telling it could not get an answer, as a network error would,
 * not the API's answer.
 */
export function isGatewayError(answer: Pick<ClientAnswer, 'status' | 'errorCode'>): boolean {
  return GATEWAY_STATUSES.has(answer.status) && answer.errorCode === null
}

/**
 * The TLS verification code (`DEPTH_ZERO_SELF_SIGNED_CERT`, `CERT_HAS_EXPIRED`,
 * `ERR_TLS_CERT_ALTNAME_INVALID`, ...) in a network error's causes, if any: a certificate the
 * client does not trust stays untrusted, so such an error is not retried.
 */
export function findCertificateError(error: unknown): string | undefined {
  const found = listCauses(error).find(({ code }) => typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code))
  return found?.code as string | undefined
}

/**
 * Whether a network error is a TLS handshake that met plain HTTP (an `https://` URL for an http
 * server): OpenSSL reads the server's `HTTP/1.1 400` as a record of an unknown TLS version. The
 * same server answers alike every time, so such an error is not retried.
 */
export function isPlainHttpError(error: unknown): boolean {
  // Older Node versions report it as EPROTO, with OpenSSL's text only.
  return listCauses(error).some(({ code, message }) => code === 'ERR_SSL_WRONG_VERSION_NUMBER' || (code === 'EPROTO' && typeof message === 'string' && /wrong version number/.test(message)))
}

/**
 * Whether fetch refused the URL's port before connecting: one of the fetch standard's blocked
 * ports (6000, 6665-6669, 10080, ...), which undici reports as "bad port". Every attempt would
 * be refused alike, so it is not retried.
 */
export function isBlockedPortError(error: unknown): boolean {
  return listCauses(error).some(({ message }) => message === 'bad port')
}
