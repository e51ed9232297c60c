import { randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import { dirname } from 'node:path'

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

function isRecord(value: unknown): value is KeyRecord {
  if (typeof value !== 'object' || value === null) return false
  const record = value as Record<string, unknown>
  const optionalString = (field: string) => record[field] === null || record[field] === undefined || typeof record[field] === 'string'
  return typeof record.key === 'string' && typeof record.created_at === 'string'
    && optionalString('label') && optionalString('expires_at') && optionalString('revoked_at') && optionalString('session_id')
}

/** Reads a keys file; a missing file is an empty one. Throws an Error naming the file otherwise. */
export async function readKeysFile(path: string): Promise<KeysFile> {
  let text: string
  try {
    text = await fsp.readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, keys: [] }
    throw error
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw new Error(`keys file ${path} is not valid JSON: ${(error as Error).message}`)
  }
  const keys = (parsed as { keys?: unknown }).keys
  if (!Array.isArray(keys) || !keys.every(isRecord)) {
    throw new Error(`keys file ${path} is not a sandbox keys file (expected { "version": 1, "keys": [...] })`)
  }
  return {
    version: 1,
    keys: keys.map((record) => ({
      key: record.key,
      label: record.label ?? null,
      created_at: record.created_at,
      expires_at: record.expires_at ?? null,
      revoked_at: record.revoked_at ?? null,
      session_id: record.session_id === undefined ? generateSessionId() : record.session_id,
    })),
  }
}

/** Writes a keys file atomically (temp file, fsync, rename), so a running server never reads half of it. */
export async function writeKeysFile(path: string, file: KeysFile): Promise<void> {
  await fsp.mkdir(dirname(path), { recursive: true })
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  const handle = await fsp.open(temp, 'w', 0o600)
  try {
    await handle.writeFile(`${JSON.stringify(file, null, 2)}\n`)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await fsp.rename(temp, path)
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

/** Whether a record may be used at `now`. */
export function describeKeyStatus(record: KeyRecord, now: Date): KeyStatus {
  if (record.revoked_at && Date.parse(record.revoked_at) <= now.getTime()) return 'revoked'
  if (record.expires_at && Date.parse(record.expires_at) <= now.getTime()) return 'expired'
  if (!record.session_id) return 'session_dropped'
  return 'active'
}
