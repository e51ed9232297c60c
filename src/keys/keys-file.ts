import { createHash, randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { createDirectory } from '../files/create-directory.js'
import { renameReplacing } from '../files/rename-replacing.js'
import { decodeJsonBytes, describeReadError, parseJsonText } from '../json-text/read-json-text.js'
import { KeysError } from './keys-error.js'
import { describeThisVersion } from '../files/describe-this-version.js'

/** One registered sandbox API key. */
export interface KeyRecord {
  key: string
  label: string | null
  created_at: string
  expires_at: string | null
  revoked_at: string | null
  /** The key's current sandbox session; null once dropped (`sandbox keys reset --drop`). */
  session_id: string | null
}

/** The keys file that `sandbox serve --keys FILE` reads and `sandbox keys` edits. */
export interface KeysFile {
  version: 1
  keys: KeyRecord[]
}

/** Whether a key may be used now. */
export type KeyStatus = 'active' | 'revoked' | 'expired' | 'session_dropped'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** Generates a new key: `sk_sandbox_` + 32 random letters and digits. */
export function generateApiKey(): string {
  const bytes = randomBytes(32)
  let suffix = ''
  for (const byte of bytes) suffix += ALPHABET[byte % ALPHABET.length]
  return `sk_sandbox_${suffix}`
}

/** Generates a session id. */
export function generateSessionId(): string {
  return `ses_${randomBytes(8).toString('hex')}`
}

/** Shows a key without revealing it: `sk_sandbox_abcd…wxyz`. */
export function maskApiKey(key: string): string {
  const body = key.startsWith('sk_sandbox_') ? key.slice('sk_sandbox_'.length) : key
  return body.length <= 8 ? `sk_sandbox_${'*'.repeat(body.length)}` : `sk_sandbox_${body.slice(0, 4)}…${body.slice(-4)}`
}

// The server's rule for a bearer token (decisions.md "Authentication").
const KEY_FORMAT = /^sk_sandbox_[A-Za-z0-9_]{16,}$/
const MASKED_FORMAT = /^sk_sandbox_[A-Za-z0-9_]{4}…[A-Za-z0-9_]{4}$/

/** Whether `key` has the form of a sandbox API key (`sk_sandbox_` + 16 or more of A-Z a-z 0-9 _). */
export function isWellFormedKey(key: string): boolean {
  return KEY_FORMAT.test(key)
}

/** Whether `text` is a key as maskApiKey shows it. */
export function isMaskedKey(text: string): boolean {
  return MASKED_FORMAT.test(text)
}

/**
 * A session id for a hand-written record that has none. Derived from the key, not random, so
 * every re-read of the file by a running server keeps the key on the same sandbox state.
 */
function deriveSessionId(key: string): string {
  return `ses_${createHash('sha256').update(`session:${key}`).digest('hex').slice(0, 16)}`
}

/** The first problem with one entry of "keys", or null when it is a valid record. */
function findRecordProblem(value: unknown, seen: Set<string>): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'is not an object'
  const record = value as Record<string, unknown>
  if (typeof record.key !== 'string' || !KEY_FORMAT.test(record.key)) {
    return 'has no valid "key" (sk_sandbox_ followed by at least 16 letters, digits or _)'
  }
  if (seen.has(record.key)) return `repeats the key ${maskApiKey(record.key)}`
  seen.add(record.key)
  if (typeof record.created_at !== 'string' || Number.isNaN(Date.parse(record.created_at))) return 'has no valid "created_at" time'
  for (const field of ['expires_at', 'revoked_at']) {
    const time = record[field]
    // A revocation or expiry that cannot be read must not silently leave the key usable.
    if (time !== null && time !== undefined && (typeof time !== 'string' || Number.isNaN(Date.parse(time)))) {
      return `has a "${field}" that is neither null nor an ISO time`
    }
  }
  for (const field of ['label', 'session_id']) {
    const text = record[field]
    if (text !== null && text !== undefined && typeof text !== 'string') return `has a "${field}" that is neither null nor a string`
  }
  return null
}

/** Checks the parsed JSON of a keys file and fills in optional fields. Throws naming the problem. */
function normalizeKeysFile(path: string, parsed: unknown): KeysFile {
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
  const seen = new Set<string>()
  const keys = shape.keys as unknown[]
  for (const [index, value] of keys.entries()) {
    const problem = findRecordProblem(value, seen)
    if (problem) throw new KeysError(`keys file ${path}: entry ${index} of "keys" ${problem}`)
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

/**
 * Reads a keys file; a missing file is an empty one. Throws a KeysError naming the file otherwise
 * (a UTF-8 byte order mark and CRLF line ends, from editors on Windows, are read as any other).
 */
export async function readKeysFile(path: string): Promise<KeysFile> {
  let bytes: Buffer
  try {
    bytes = await fsp.readFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, keys: [] }
    throw new KeysError(`cannot read keys file ${path}: ${describeReadError(error)}`, { cause: error })
  }
  let parsed: unknown
  try {
    parsed = parseJsonText(decodeJsonBytes(bytes))
  } catch (error) {
    const empty = bytes.length === 0 ? '; delete it ("sandbox keys create" makes a new one) or write {"version": 1, "keys": []} into it' : ''
    throw new KeysError(`keys file ${path}: ${(error as Error).message}${empty}`, { cause: error })
  }
  return normalizeKeysFile(path, parsed)
}

/**
 * The file a write to PATH must replace: PATH, or the file its symbolic links lead to. Renamed
 * over the link itself, the new keys went into a plain file beside the link, and the file a
 * `serve --keys` on the target reads never got them. A link to a missing file leads there too.
 * A relative link is read from the real directory that holds it, as the system does: taken from
 * the path as written, `../keys.json` in a directory reached through a linked one led elsewhere.
 */
async function resolveLinks(path: string): Promise<string> {
  let target = path
  for (let hops = 0; hops < 40; hops++) {
    const info = await fsp.lstat(target).catch(() => undefined)
    if (!info?.isSymbolicLink()) return target
    target = resolve(await fsp.realpath(dirname(target)), await fsp.readlink(target))
  }
  throw Object.assign(new Error(`too many symbolic links from ${path}`), { code: 'ELOOP' })
}

/** Writes a keys file atomically (temp file, fsync, rename), so a running server never reads half of it. */
export async function writeKeysFile(path: string, file: KeysFile): Promise<void> {
  let temp: string | undefined
  try {
    const target = await resolveLinks(path)
    temp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
    await createDirectory(dirname(target))
    const handle = await fsp.open(temp, 'w', 0o600)
    try {
      await handle.writeFile(`${JSON.stringify(file, null, 2)}\n`)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await renameReplacing(temp, target)
  } catch (error) {
    if (temp) await fsp.rm(temp, { force: true }).catch(() => {})
    throw new KeysError(`cannot write keys file ${path}: ${(error as Error).message}`, { cause: error })
  }
}

/** A new key record with a fresh key and session. */
export function createKeyRecord(options: { label?: string | null; expiresAt?: string | null; now: Date }): KeyRecord {
  return {
    key: generateApiKey(),
    label: options.label ?? null,
    created_at: options.now.toISOString(),
    expires_at: options.expiresAt ?? null,
    revoked_at: null,
    session_id: generateSessionId(),
  }
}

/** The record of a full key, if registered. */
export function findKeyRecord(file: KeysFile, key: string): KeyRecord | undefined {
  return file.keys.find((record) => record.key === key)
}

/**
 * Whether a record may be used at `now`. A revocation holds whatever its time: `keys revoke`
 * writes the clock's time, and a clock set back after it (NTP, a resumed VM) would otherwise
 * bring the key back until the clock passed that time again.
 */
export function describeKeyStatus(record: KeyRecord, now: Date): KeyStatus {
  if (record.revoked_at) return 'revoked'
  if (record.expires_at && Date.parse(record.expires_at) <= now.getTime()) return 'expired'
  if (!record.session_id) return 'session_dropped'
  return 'active'
}
