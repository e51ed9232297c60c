import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import { decodeJsonBytes, describeReadError, parseJsonText } from '../json-text/read-json-text.js'
import { generateApiKey } from './api-key-text.js'
import { normalizeKeysFile } from './check-keys-file.js'
import { KeysError } from './keys-error.js'
import type { KeyRecord, KeysFile, KeyStatus } from './keys-file-types.js'

/** Generates a session id. */
export function generateSessionId(): string {
  return `ses_${randomBytes(8).toString('hex')}`
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
