import type { SandboxStorage } from '../storage/sandbox-storage.js'
import { guardStorage } from '../storage/storage-error.js'
import { deriveKeyId, type Principal } from './auth.js'
import { sessionSlotOf } from './session-doc.js'
import { SPILL_PREFIX } from './spilled-deliveries.js'

/** Deletes everything stored for one session of a key (`sandbox keys reset`, and the server once it sees one). */
export async function deleteSessionData(storage: SandboxStorage, apiKey: string, sessionId: string): Promise<void> {
  await deleteStoredSession(storage, { keyId: deriveKeyId(apiKey), sessionId })
}

/**
 * Deletes a session's document, idempotency batches and spilled deliveries from storage; `batches`,
 * when given, are those of `listSessionBatches` taken since the session was last used.
 */
export async function deleteStoredSession(storage: SandboxStorage, { keyId, sessionId }: Pick<Principal, 'keyId' | 'sessionId'>, batches?: string[]): Promise<void> {
  const files = guardStorage(storage)
  batches ??= [...await files.getKeys(`idem:${keyId}:${sessionId}`), ...await files.getKeys(`${SPILL_PREFIX}:${keyId}:${sessionId}`)]
  await Promise.all(batches.map((key) => files.removeItem(key)))
  await files.removeItem(`session:${sessionSlotOf({ keyId, sessionId })}`)
}

/**
 * The idempotency batches and spilled deliveries of every session, by slot (`<key id>:<session id>`),
 * in two listings: a sweep that deletes thousands of sessions listed both prefixes for each, and on
 * redis each listing scans the whole database.
 */
export async function listSessionBatches(storage: SandboxStorage): Promise<Map<string, string[]>> {
  const files = guardStorage(storage)
  const bySlot = new Map<string, string[]>()
  for (const key of [...await files.getKeys('idem'), ...await files.getKeys(SPILL_PREFIX)]) {
    const [, keyId, sessionId] = key.split(':')
    if (keyId === undefined || sessionId === undefined) continue
    const slot = `${keyId}:${sessionId}`
    const listed = bySlot.get(slot)
    if (listed) listed.push(key)
    else bySlot.set(slot, [key])
  }
  return bySlot
}
