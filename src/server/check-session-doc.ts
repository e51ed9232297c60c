import { describeThisVersion } from '../files/describe-this-version.js'
import { SESSION_DOC_VERSION, type SessionDoc } from './session-doc.js'

/**
 * Why a stored value cannot be used as a session document, if it cannot: valid JSON of another
 * shape (a file replaced by hand) would fail deep in the domain code, and a newer version's
 * document would be read by this version's rules and written back with its changes half kept.
 */
export function checkSessionDoc(value: unknown): { problem: string; damaged: boolean } | undefined {
  const doc = value as Partial<Omit<SessionDoc, 'version'>> & { version?: unknown } | null
  const damaged = { problem: 'is not a session document', damaged: true }
  if (typeof doc !== 'object' || doc === null) return damaged
  if (typeof doc.version === 'number' && Number.isInteger(doc.version) && doc.version > SESSION_DOC_VERSION) {
    const problem = `was written by a newer sandbox (session document version ${doc.version}); this is ${describeThisVersion()}, which reads version ${SESSION_DOC_VERSION}. It is left as it is: use that newer version again, or give this one another data dir or database`
    return { problem, damaged: false }
  }
  const shaped = typeof doc.book === 'object' && doc.book !== null && Array.isArray(doc.idempotency) && Array.isArray(doc.response_batches)
  return shaped ? undefined : damaged
}
