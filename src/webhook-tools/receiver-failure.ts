import { describeCertificateProblem } from '../text/certificate-advice.js'

const UNREACHABLE = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)\b/
const CERTIFICATE = /^([A-Z_]*(CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER)[A-Z_]*):/
const PLAIN_HTTP = /^ERR_SSL_WRONG_VERSION_NUMBER\b/

/**
 * Why a first send found no receiver to judge, as a whole sentence with what to change, or
 * undefined when the failure is the receiver's answer to judge (a timeout, a cut answer). A
 * certificate this machine does not trust fails every send alike: judged, it read as a receiver
 * that mishandled all of them.
 */
export function describeUnreachableReceiver(url: string, reason: string): string | undefined {
  if (PLAIN_HTTP.test(reason)) return `cannot reach the receiver at ${url}: it answers plain HTTP, not TLS (ERR_SSL_WRONG_VERSION_NUMBER); use http:// rather than https://`
  const certificate = CERTIFICATE.exec(reason)?.[1]
  if (certificate) return `cannot reach the receiver at ${url} (${reason}); ${describeCertificateProblem(url, certificate)}`
  // llhttp's codes: what answered is no HTTP server (an SSH or database port), or one whose answer is no HTTP.
  // Headers over the sender's bound are an answer, from a receiver that speaks HTTP: judged, each case says so.
  if (/^HPE_(?!HEADER_OVERFLOW)/.test(reason)) return `the server at ${url} does not answer in HTTP (${reason}): is this your receiver's port?`
  // A reset is a receiver that is running: asked "is it running?", its developer looks in the wrong place.
  if (/^ECONNRESET\b/.test(reason)) return `the receiver at ${url} took the connection and closed it without answering (${reason}): did it fail on the first delivery? (an https receiver given an http:// URL does this too)`
  if (UNREACHABLE.test(reason)) return `cannot reach the receiver at ${url} (${reason}); is it running?`
  return undefined
}
