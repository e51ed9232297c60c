import { createHash } from 'node:crypto'
import { describeThisVersion } from '../files/describe-this-version.js'
import { describeInstantProblem } from '../text/iso-time.js'
import { isWellFormedKey, maskApiKey } from './api-key-text.js'
import { KeysError } from './keys-error.js'
import type { KeyRecord, KeysFile } from './keys-file-types.js'

/**
 * A session id for a hand-written record that has none. Derived from the key, not random, so
 * every re-read of the file by a running server keeps the key on the same sandbox state.
 */
function deriveSessionId(key: string): string {
  return `ses_${createHash('sha256').update(`session:${key}`).digest('hex').slice(0, 16)}`
}

/** What a session id may be: `sandbox keys` makes `ses_` and 16 hex digits. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,64}$/

/** The first problem with one entry of "keys", or null when it is a valid record. `seen` maps each key to its entry's number. */
function findRecordProblem(value: unknown, seen: Map<string, number>, entry: number): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'is not an object'
  const record = value as Record<string, unknown>
  if (typeof record.key !== 'string' || !isWellFormedKey(record.key)) {
    return 'has no valid "key" (sk_sandbox_ followed by at least 16 letters, digits or _)'
  }
  const earlier = seen.get(record.key)
  if (earlier !== undefined) return `repeats the key ${maskApiKey(record.key)} of entry ${earlier}`
  seen.set(record.key, entry)
  if (typeof record.created_at !== 'string' || Number.isNaN(Date.parse(record.created_at))) return 'has no valid "created_at" time'
  for (const field of ['expires_at', 'revoked_at']) {
    const time = record[field]
    // A revocation or expiry that cannot be read must not silently leave the key usable.
    if (time === null || time === undefined) continue
    const problem = typeof time === 'string' ? describeInstantProblem(time) : 'not_iso'
    if (problem === 'not_iso') return `has a "${field}" that is neither null nor an ISO time`
    // Read in each machine's own zone, a hand-written expiry differed between a laptop and CI,
    // and `keys list` showed it marked Z whatever the zone. (A revocation holds whatever its time.)
    if (problem === 'no_zone' && field === 'expires_at') {
      const trimmed = (time as string).trim()
      return `has an "expires_at" ${JSON.stringify(time)} with no time zone: add Z for UTC (${trimmed}Z) or an offset such as +01:00`
    }
  }
  if (record.label !== null && record.label !== undefined && typeof record.label !== 'string') return 'has a "label" that is neither null nor a string'
  // The session id names the key's storage: "../x" made every request a 500 (storage refused the
  // name, and the server blamed the disk), and ":" split the name where the server reads it back.
  const session = record.session_id
  if (session !== null && session !== undefined && (typeof session !== 'string' || !SESSION_ID.test(session))) {
    return 'has a "session_id" that is neither null nor 1 to 64 letters, digits, _ or - (delete it: a session is made for the key)'
  }
  return null
}

/** The entry's masked key, in parentheses, when it has a valid one the problem does not already name. */
function describeEntryKey(value: unknown, problem: string): string {
  const key = (value as { key?: unknown } | null)?.key
  if (typeof key !== 'string' || !isWellFormedKey(key) || problem.includes(maskApiKey(key))) return ''
  return ` (${maskApiKey(key)})`
}

/** Checks the parsed JSON of a keys file and fills in optional fields. Throws naming the problem. */
export function normalizeKeysFile(path: string, parsed: unknown): KeysFile {
  const shape = parsed as { version?: unknown; keys?: unknown } | null
  if (typeof shape !== 'object' || shape === null || !Array.isArray(shape.keys)) {
    throw new KeysError(`keys file ${path} is not a sandbox keys file (expected { "version": 1, "keys": [...] })`)
  }
  if (typeof shape.version === 'number' && Number.isInteger(shape.version) && shape.version > 1) {
    throw new KeysError(`keys file ${path} was written by a newer sandbox (version ${shape.version}); this is ${describeThisVersion()}, which reads version 1. It was not changed: use that newer version again, or give this one another keys file (--keys)`)
  }
  if (shape.version !== undefined && shape.version !== 1) {
    throw new KeysError(`keys file ${path} has version ${JSON.stringify(shape.version)}; this sandbox reads version 1`)
  }
  const seen = new Map<string, number>()
  const keys = shape.keys as unknown[]
  for (const [index, value] of keys.entries()) {
    // Counted from 1, as a person editing the file counts: "entry 1" (from 0) sent them to the
    // wrong entry. The key, once readable, tells entries apart however the file is laid out.
    const entry = index + 1
    const problem = findRecordProblem(value, seen, entry)
    if (problem) throw new KeysError(`keys file ${path}: entry ${entry} of "keys"${describeEntryKey(value, problem)} ${problem}`)
  }
  // Fields this version does not know (a newer version's, in a file it kept at version 1) are
  // kept, so that rewriting the file (keys create, revoke, reset) does not drop them.
  return {
    ...(shape as object),
    version: 1,
    keys: (keys as Array<Partial<KeyRecord> & { key: string; created_at: string }>).map((record) => ({
      ...record,
      key: record.key,
      label: record.label ?? null,
      created_at: record.created_at,
      expires_at: record.expires_at ?? null,
      revoked_at: record.revoked_at ?? null,
      // Absent means "never dropped"; null means dropped by `sandbox keys reset --drop`.
      session_id: record.session_id === undefined ? deriveSessionId(record.key) : record.session_id,
    })),
  }
}
