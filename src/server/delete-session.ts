import type { SandboxStorage } from '../storage/sandbox-storage.js'
import { guardStorage } from '../storage/storage-error.js'
import { deriveKeyId, type Principal } from './auth.js'
import { sessionSlotOf } from './session-doc.js'
import { SPILL_PREFIX } from './spilled-deliveries.js'

/** Deletes everything stored for one session of a key (`sandbox keys reset`, and the server once it sees one). */
export async function deleteSessionData(storage: SandboxStorage, apiKey: string, sessionId: string): Promise<void> {
  await deleteStoredSession(storage, { keyId: deriveKeyId(apiKey), sessionId })
}

/** Deletes a session's document, idempotency batches and spilled deliveries from storage. */
export async function deleteStoredSession(storage: SandboxStorage, { keyId, sessionId }: Pick<Principal, 'keyId' | 'sessionId'>): Promise<void> {
  const files = guardStorage(storage)
  const batches = [...await files.getKeys(`idem:${keyId}:${sessionId}`), ...await files.getKeys(`${SPILL_PREFIX}:${keyId}:${sessionId}`)]
  await Promise.all(batches.map((key) => files.removeItem(key)))
  await files.removeItem(`session:${sessionSlotOf({ keyId, sessionId })}`)
}
