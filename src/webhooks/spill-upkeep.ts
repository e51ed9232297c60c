import type { Principal } from '../server/auth.js'
import { principalOfSlot, sessionSlotOf } from '../server/session-doc.js'
import type { KeyedMutexLike } from '../server/services.js'
import type { SessionStore } from '../server/session-store.js'
import { restoreRun } from './delivery-spill.js'

/**
 * The upkeep of spilled delivery batches (delivery-spill.ts) that the dispatcher's workers and
 * its start need: bringing a batch back into its session, and removing batches a crash orphaned.
 */
export function createSpillUpkeep({ sessions, mutex, logError }: { sessions: SessionStore; mutex: KeyedMutexLike; logError: (error: unknown) => void }) {
  /**
   * Brings a spilled batch whose turn has come back into the session document; the batch is
   * deleted only once the document holding its deliveries is written.
   */
  async function restore(principal: Principal, batch: number): Promise<void> {
    const restored = await mutex.run(sessionSlotOf(principal), async () => {
      const current = await sessions.load(principal)
      const run = current.webhook.spilled?.find((item) => item.batch === batch)
      if (!run) return false
      const webhook = restoreRun(current.webhook, run, await sessions.readSpilled(principal, batch))
      await sessions.save(principal, { ...current, webhook })
      return true
    })
    if (restored) await sessions.removeSpilled(principal, batch).catch(logError)
  }

  /**
   * Deletes spilled batches that no session document lists. A batch is written before the
   * document that lists it and deleted after the one that no longer does, so a crash between the
   * two leaves one behind, and nothing else would ever read or remove it.
   */
  async function removeOrphans(): Promise<void> {
    for (const [slot, batches] of await sessions.listSpilled()) {
      const principal = principalOfSlot(slot)
      // A session that cannot be read now is left as it is: its requests will report that.
      await mutex.run(slot, async () => {
        const listed = new Set((await sessions.load(principal)).webhook.spilled?.map((run) => run.batch))
        await Promise.all(batches.filter((batch) => !listed.has(batch)).map((batch) => sessions.removeSpilled(principal, batch)))
      }).catch(logError)
    }
  }

  return { restore, removeOrphans }
}
