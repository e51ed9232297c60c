import type { SandboxStorage } from '../storage/sandbox-storage.js'
import { guardStorage } from '../storage/storage-error.js'

/** The storage prefix of each key's last use (`keyuse:<key id>:<session id>`), kept for `serve --forget-idle-keys`. */
export const KEY_USE_PREFIX = 'keyuse'

interface KnownUse {
  /** A use this server saw (exact). */
  seen?: number
  /** The time storage holds, as this server last wrote or read it. */
  stored?: number
  /** When a request's write of the time last failed. */
  failedAt?: number
}

/** After a failed write, the key's requests write nothing for this long: a stalled redis would cost each of them its timeout. */
const FAILED_WRITE_PAUSE_MS = 30_000

/**
 * When each key was last used, in memory and in storage. A request writes the time only when the
 * stored one is `stepMs` old or more (once per key per step, not per request), so what storage
 * holds is at most `stepMs` older than the last use: after a restart, `lastUse` counts from the
 * stored time plus `stepMs`, and a key is never forgotten before its idle time is really over.
 */
export function createKeyUse(storage: SandboxStorage, options: { stepMs: number }) {
  const files = guardStorage(storage)
  const known = new Map<string, KnownUse>()
  const keyOf = (slot: string) => `${KEY_USE_PREFIX}:${slot}`

  async function write(slot: string, entry: KnownUse, at: number): Promise<void> {
    const before = entry.stored
    // Set first: the key's other requests meanwhile need not write it too.
    entry.stored = at
    try {
      await files.setItem(keyOf(slot), { at: new Date(at).toISOString() })
    } catch (error) {
      if (entry.stored === at) entry.stored = before
      throw error
    }
  }

  function entryOf(slot: string): KnownUse {
    let entry = known.get(slot)
    if (!entry) known.set(slot, (entry = {}))
    return entry
  }

  return {
    /**
     * Records a request of the key, the stored time once it is `stepMs` old. Storage that fails
     * fails no request: the time is kept in memory, and a request 30 s later writes it again.
     */
    async note(slot: string, now = Date.now()): Promise<void> {
      const entry = entryOf(slot)
      entry.seen = Math.max(entry.seen ?? now, now)
      if (entry.stored !== undefined && now - entry.stored < options.stepMs) return
      if (entry.failedAt !== undefined && now - entry.failedAt < FAILED_WRITE_PAUSE_MS && now >= entry.failedAt) return
      await write(slot, entry, now).then(() => { entry.failedAt = undefined }, () => { entry.failedAt = now })
    },
    /** The latest the key may have been used, as far as this server knows; undefined when it knows nothing yet. */
    lastUse(slot: string): number | undefined {
      const entry = known.get(slot)
      if (!entry) return undefined
      if (entry.seen !== undefined) return entry.seen
      return entry.stored === undefined ? undefined : entry.stored + options.stepMs
    },
    /** Reads the stored time (then known to `lastUse`); undefined when storage holds none or one it cannot read. */
    async readStored(slot: string): Promise<number | undefined> {
      const value = await files.getItem<{ at?: unknown }>(keyOf(slot))
      const at = typeof value?.at === 'string' ? Date.parse(value.at) : Number.NaN
      if (Number.isNaN(at)) return undefined
      const entry = entryOf(slot)
      entry.stored = Math.max(entry.stored ?? at, at)
      return at
    },
    /** Stores `now` as the key's last use without a request: for state stored before uses were recorded. */
    stamp: (slot: string, now = Date.now()): Promise<void> => write(slot, entryOf(slot), now),
    /** Deletes the key's stored time once its state is gone; a use seen meanwhile is kept, and stored again at its next request. */
    async remove(slot: string, seenBefore: number | undefined): Promise<void> {
      await files.removeItem(keyOf(slot))
      const entry = known.get(slot)
      if (entry && entry.seen !== seenBefore) entry.stored = undefined
      else known.delete(slot)
    },
    /** The slots with a stored time. */
    async listSlots(): Promise<string[]> {
      return (await files.getKeys(KEY_USE_PREFIX)).map((key) => key.slice(KEY_USE_PREFIX.length + 1))
    },
  }
}

/** What createKeyUse makes. */
export type KeyUse = ReturnType<typeof createKeyUse>
