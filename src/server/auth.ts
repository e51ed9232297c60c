import { createHash } from 'node:crypto'
import { stat } from 'node:fs/promises'
import { ApiError } from './api-error.js'
import { SetupError } from '../errors/setup-error.js'
import { isWellFormedKey } from '../keys/api-key-text.js'
import { describeKeyStatus, findKeyRecord, readKeysFile } from '../keys/keys-file.js'
import type { KeysFile } from '../keys/keys-file-types.js'

/** Who a request acts for: the key, the storage id derived from it, and its sandbox session. */
export interface Principal {
  apiKey: string
  keyId: string
  sessionId: string
}

/** Open mode has one implicit session per key. */
export const OPEN_SESSION_ID = 'default'
/** Keys whose id is remembered; past that the memo starts over (a load of fresh keys stays bounded). */
const KEY_ID_CACHE_SIZE = 10_000
/** How often a running server looks at the keys file for changes. */
const KEYS_FILE_RECHECK_MS = 250

/** Storage id of an API key: keys never appear in file names or storage keys in clear. */
export function deriveKeyId(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 32)
}

/** Extracts the bearer token, or throws 401 SANDBOX_API_KEY_REQUIRED. */
function readBearer(header: string | null): string {
  const match = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null
  if (!match) {
    // Repeated Authorization headers arrive joined with commas: asked to send the header, a
    // client that sent it twice (its own on top of its library's) was told what it had done.
    const repeated = header !== null && /^\s*Bearer[ ]+[^\s,]+\s*,/i.test(header)
    throw new ApiError('SANDBOX_API_KEY_REQUIRED', repeated
      ? 'The Authorization header came more than once (or held several values); send it once, as "Authorization: Bearer sk_sandbox_...".'
      : 'Send your sandbox API key as "Authorization: Bearer sk_sandbox_...".')
  }
  return match[1]!
}

function invalidKey(why: string): ApiError {
  return new ApiError('SANDBOX_API_KEY_INVALID', `The API key is ${why}.`)
}

/** A key's session that the keys file no longer names (`sandbox keys reset`, with or without --drop). */
export interface EndedSession {
  apiKey: string
  sessionId: string
}

function listEndedSessions(before: KeysFile, after: KeysFile): EndedSession[] {
  const current = new Map(after.keys.map((record) => [record.key, record.session_id]))
  return before.keys
    .filter((record) => record.session_id !== null && current.get(record.key) !== record.session_id)
    .map((record) => ({ apiKey: record.key, sessionId: record.session_id! }))
}

/**
 * Authenticates requests. Without a keys file any well-formed key is accepted and gets its own
 * state (open mode). With one, only registered, unrevoked, unexpired keys with a live session
 * pass; the file is re-read when it changes, so `sandbox keys ...` applies to a running server.
 */
export async function createAuthenticator(options: {
  keysFile?: string
  onSessionsEnded?: (ended: EndedSession[]) => void
  /** Told once per problem when the keys file cannot be read while running (the last good keys stay in use). */
  onKeysFileProblem?: (error: SetupError) => void
}) {
  const path = options.keysFile
  let keys: KeysFile | undefined
  let signature = ''
  let checkedAt = 0
  let reloading: Promise<void> | undefined
  let problem: string | undefined

  async function reload(): Promise<void> {
    const info = await stat(path!)
    // The inode too: `sandbox keys` replaces the file (a new inode each time where inodes are
    // real: HFS+, APFS, NTFS, ext4), and where times are coarse (HFS+: 1 s, FAT32: 2 s) two
    // resets in one tick have the same time and size. FAT's inodes may follow the entry's place.
    const next = `${info.ino}:${info.mtimeMs}:${info.size}`
    if (next !== signature) {
      const before = keys
      keys = await readKeysFile(path!)
      signature = next
      const ended = before ? listEndedSessions(before, keys) : []
      if (ended.length > 0) options.onSessionsEnded?.(ended)
    }
  }

  if (path) {
    try {
      await reload()
    } catch (error) {
      // The keys file's own errors already name the file and what is wrong with it.
      const message = (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? `keys file ${path} does not exist; create a key with "sandbox keys create --keys ${path}"`
        : (error as Error).message
      throw new SetupError(message, { cause: error })
    }
    checkedAt = performance.now()
  }

  /**
   * Reads the keys file again if it changed, at most every KEYS_FILE_RECHECK_MS. Timed by the
   * monotonic clock: on the wall clock, one set back an hour left every change (a revoked key,
   * a new one) unseen for that hour.
   */
  async function refresh(): Promise<void> {
    // A request that comes while the file is being read again waits for that read: judged by the
    // keys read before, a burst after `keys revoke` got in, and one after `keys reset` wrote into
    // the ended session, answered 200, and was deleted with it.
    if (reloading) return reloading
    const at = performance.now()
    if (at - checkedAt < KEYS_FILE_RECHECK_MS) return
    checkedAt = at
    // A half-written or briefly missing file keeps the last good copy rather than locking everyone
    // out; the operator is told once, or a broken edit would go unnoticed while keys stop changing.
    reloading ??= reload()
      .then(() => { problem = undefined })
      .catch((error: Error) => {
        // The keys file's own errors name the file; a system error (ENOENT) gets it named here.
        const code = (error as NodeJS.ErrnoException).code
        const message = `${code ? `keys file ${path} cannot be read (${code})` : error.message}; the server keeps the ${keys?.keys.length ?? 0} keys it read before`
        if (message !== problem) options.onKeysFileProblem?.(new SetupError(message, { cause: error }))
        problem = message
      })
      .finally(() => { reloading = undefined })
    await reloading
  }

  /** Key ids of recent keys: hashing each request's key again cost more than the rest of GET config. */
  const keyIds = new Map<string, string>()
  function keyIdOf(apiKey: string): string {
    let keyId = keyIds.get(apiKey)
    if (keyId === undefined) {
      if (keyIds.size >= KEY_ID_CACHE_SIZE) keyIds.clear()
      keyIds.set(apiKey, (keyId = deriveKeyId(apiKey)))
    }
    return keyId
  }

  /** Resolves the principal for an Authorization header value, or throws a 401 ApiError. */
  async function authenticate(header: string | null, now = Date.now()): Promise<Principal> {
    const apiKey = readBearer(header)
    if (!isWellFormedKey(apiKey)) {
      throw invalidKey('not a sandbox key (expected sk_sandbox_ followed by at least 16 letters, digits or _)')
    }
    if (!path) return { apiKey, keyId: keyIdOf(apiKey), sessionId: OPEN_SESSION_ID }
    await refresh()
    const record = keys && findKeyRecord(keys, apiKey)
    if (!record) throw invalidKey('not registered on this sandbox')
    const status = describeKeyStatus(record, new Date(now))
    if (status === 'revoked') throw invalidKey('revoked')
    if (status === 'expired') throw invalidKey('expired')
    if (status === 'session_dropped' || !record.session_id) {
      throw new ApiError('SANDBOX_SESSION_REQUIRED', 'The sandbox session of this key was deleted; recreate it with "sandbox keys reset KEY".')
    }
    return { apiKey, keyId: keyIdOf(apiKey), sessionId: record.session_id }
  }

  /**
   * The key a request presented when this sandbox knows it, whether or not it was accepted: any
   * well-formed key in open mode, a key of the keys file otherwise (revoked, expired, session
   * dropped). The request log files refused and route-less requests under it, so its owner sees
   * why; unknown keys get nothing, so strangers cannot roll the log over.
   */
  function identifyKnownKey(header: string | null): { apiKey: string; keyId: string } | undefined {
    let apiKey: string
    try {
      apiKey = readBearer(header)
    } catch {
      return undefined
    }
    if (!isWellFormedKey(apiKey) || (path && !(keys && findKeyRecord(keys, apiKey)))) return undefined
    return { apiKey, keyId: keyIdOf(apiKey) }
  }

  return { authenticate, identifyKnownKey, mode: path ? ('registered' as const) : ('open' as const) }
}

/** An authenticator made by createAuthenticator. */
export type Authenticator = Awaited<ReturnType<typeof createAuthenticator>>
