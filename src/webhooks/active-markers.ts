import type { SandboxStorage } from '../storage/sandbox-storage.js'

const ACTIVE_PREFIX = 'webhooks:active'

/**
 * One small marker key per session with deliveries waiting, so a restart finds them without
 * reading every session, and marking one costs the same however many there are. Without
 * persistent storage there is no restart, and only the in-memory set is kept.
 */
export function createActiveMarkers(options: { storage: SandboxStorage; persistent: boolean; logError: (error: unknown) => void }) {
  const { storage } = options
  const active = new Set<string>()
  const writes = new Set<Promise<unknown>>()
  /** The latest marker write started per slot, while it runs: only that one may undo its change. */
  const latest = new Map<string, Promise<unknown>>()

  /**
   * Marks `slot` as having deliveries waiting, or not; writes only a change. The write is started
   * before the first await, so a caller that starts another write right after knows this one was
   * sent first.
   */
  async function mark(slot: string, isActive: boolean): Promise<void> {
    if (active.has(slot) === isActive) return
    if (isActive) active.add(slot)
    else active.delete(slot)
    if (!options.persistent) return
    const key = `${ACTIVE_PREFIX}:${slot}`
    const write: Promise<unknown> = (isActive ? storage.setItem(key, 1) : storage.removeItem(key)).then(() => true, (error: unknown) => {
      options.logError(error)
      // A failed write changed nothing stored as far as this server knows: the set forgets the
      // change so the next mark writes it again, rather than taking it as done for good (a marker
      // lost with storage down left a key's deliveries unseen by every later start).
      if (latest.get(slot) !== write) return
      if (isActive) active.delete(slot)
      else active.add(slot)
    })
    writes.add(write)
    latest.set(slot, write)
    await write
    writes.delete(write)
    if (latest.get(slot) === write) latest.delete(slot)
  }

  /** The slots marked in storage (by an earlier run of the server), now marked here too. */
  async function load(): Promise<string[]> {
    const slots = (await storage.getKeys(ACTIVE_PREFIX)).map((marker) => marker.slice(ACTIVE_PREFIX.length + 1))
    for (const slot of slots) active.add(slot)
    return slots
  }

  /** Resolves once the marker writes started so far have ended. */
  const settle = (): Promise<void> => Promise.all(writes).then(() => undefined)

  return { mark, load, settle }
}
