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
