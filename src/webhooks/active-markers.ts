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

  /** Marks `slot` as having deliveries waiting, or not; writes only a change. */
  async function mark(slot: string, isActive: boolean): Promise<void> {
    if (active.has(slot) === isActive) return
    if (isActive) active.add(slot)
    else active.delete(slot)
    if (!options.persistent) return
    const key = `${ACTIVE_PREFIX}:${slot}`
    const write = (isActive ? storage.setItem(key, 1) : storage.removeItem(key)).catch(options.logError)
    writes.add(write)
    await write
    writes.delete(write)
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
