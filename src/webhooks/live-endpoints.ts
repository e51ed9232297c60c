import type { StoredEndpoint } from './types.js'

/**
 * The endpoint each running delivery worker's session has now, as commits change it. A worker
 * reads its document once and then may wait for a place in flight (up to a delivery timeout per
 * send ahead of it) or for its connection: a rotation, DELETE or new URL committed meanwhile must
 * still apply to the send it is about to make (README: rotation takes effect at once; a disabled
 * endpoint's deliveries wait as they are).
 */
export function createLiveEndpoints() {
  /** Slots whose worker runs, with the endpoint their last commit since then left, if any. */
  const watched = new Map<string, { changed?: { endpoint: StoredEndpoint | null } }>()

  /** Runs a worker's `work`, keeping track of commits to its session meanwhile. */
  async function watch<T>(slot: string, work: () => Promise<T>): Promise<T> {
    // A slot has one worker run at a time (slot-workers.ts): no count needed.
    watched.set(slot, {})
    try {
      return await work()
    } finally {
      watched.delete(slot)
    }
  }

  /** After a commit of `slot` that left `endpoint`. */
  function committed(slot: string, endpoint: StoredEndpoint | null): void {
    const entry = watched.get(slot)
    if (entry) entry.changed = { endpoint }
  }

  /**
   * The session's endpoint now: the one a commit left since its worker began, else `loaded` (from
   * a document the worker read after it began, so no later commit went unseen).
   */
  function current(slot: string, loaded: StoredEndpoint | null): StoredEndpoint | null {
    const changed = watched.get(slot)?.changed
    return changed ? changed.endpoint : loaded
  }

  return { watch, committed, current }
}
