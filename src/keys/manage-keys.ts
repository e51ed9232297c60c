import { existsSync } from 'node:fs'
import { isMaskedKey, isWellFormedKey, maskApiKey, readTypedMask } from './api-key-text.js'
import { createKeyRecord, generateSessionId, readKeysFile } from './keys-file.js'
import type { KeyRecord, KeysFile } from './keys-file-types.js'
import { writeKeysFile } from './write-keys-file.js'
import { KeysError } from './keys-error.js'
import { withKeysFileLock } from './keys-file-lock.js'

/**
 * Adds a new key to the keys file and returns its record. Under the file's lock: two creates at
 * once each read the file without the other's key, and the later write dropped the earlier key.
 */
export async function addKey(path: string, options: { label?: string; expiresAt?: string | null; now?: Date }): Promise<KeyRecord> {
  return withKeysFileLock(path, async () => {
    const file = await readKeysFile(path)
    const record = createKeyRecord({ label: options.label ?? null, expiresAt: options.expiresAt ?? null, now: options.now ?? new Date() })
    await writeKeysFile(path, { ...file, keys: [...file.keys, record] })
    return record
  })
}

/**
 * Finds one registered key by its full value, a unique prefix, or its masked form. Throws an
 * Error saying why none or several matched (naming `path`, the file read, when given).
 */
export function matchKey(file: KeysFile, typed: string, path?: string): KeyRecord {
  const query = readTypedMask(typed)
  const matches = file.keys.filter((record) => record.key === query || maskApiKey(record.key) === query)
  const candidates = matches.length ? matches : file.keys.filter((record) => query.length >= 12 && record.key.startsWith(query))
  if (candidates.length === 1) return candidates[0]!
  if (candidates.length === 0) throw new KeysError(describeNoMatch(query, path))
  throw new KeysError(`"${query}" matches ${candidates.length} keys; give more of the key`)
}

function describeNoMatch(query: string, path: string | undefined): string {
  if (isWellFormedKey(query)) {
    // The file read is named: a server reading another one (another directory, no --keys) is
    // the likelier cause for a key a lead just handed out.
    const where = path === undefined ? ' (see "sandbox keys list")' : ` of ${path} (see "sandbox keys list"; another keys file: --keys FILE)`
    return `${maskApiKey(query)} is not a registered key${where}; only keys made by "sandbox keys create" have a record to change; an open-mode key has none (for an empty state, use a new key)`
  }
  if (!isMaskedKey(query) && query.length < 12) return `"${query}" is too short to pick a key: give the key, its masked form, or a prefix of at least 12 characters`
  return `no registered key matches "${query}"; see "sandbox keys list"`
}

/** Changes one key's record, read and written under the file's lock so no other change is lost. */
async function updateKey(path: string, query: string, change: (record: KeyRecord) => KeyRecord): Promise<{ before: KeyRecord; after: KeyRecord }> {
  // Matched once before locking too: a KEY that is not there (no keys file, even) fails without
  // the lock making the file's directory.
  if (!existsSync(path)) throw new KeysError(`there is no keys file ${path}: give the one the server reads with --keys FILE (or SANDBOX_KEYS_FILE)`)
  matchKey(await readKeysFile(path), query, path)
  return withKeysFileLock(path, async () => {
    const file = await readKeysFile(path)
    const before = matchKey(file, query, path)
    const after = change(before)
    await writeKeysFile(path, { ...file, keys: file.keys.map((record) => (record === before ? after : record)) })
    return { before, after }
  })
}

/** Revokes a key: the server answers 401 SANDBOX_API_KEY_INVALID for it from then on. */
export function revokeKey(path: string, query: string, now = new Date()): Promise<{ before: KeyRecord; after: KeyRecord }> {
  return updateKey(path, query, (record) => ({ ...record, revoked_at: record.revoked_at ?? now.toISOString() }))
}

/**
 * Gives a key a new, empty session (or, with `drop`, none: 401 SANDBOX_SESSION_REQUIRED until
 * reset again). Returns the record before and after so the caller can delete the old session's data.
 */
export function resetKeySession(path: string, query: string, options: { drop?: boolean } = {}): Promise<{ before: KeyRecord; after: KeyRecord }> {
  return updateKey(path, query, (record) => ({ ...record, session_id: options.drop ? null : generateSessionId() }))
}
