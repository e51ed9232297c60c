import { setTimeout as sleep } from 'node:timers/promises'
import type { SandboxClient } from '../client/sandbox-client.js'
import type { DeliveryEntry } from './wait-for-deliveries.js'

/** What a delivery looked like when last read: a new attempt or state changes it. */
const fingerprint = (delivery: DeliveryEntry) => `${delivery.status} ${delivery.attempts} ${delivery.updated_at}`

/**
 * The entries of `log` (newest first, as GET /webhooks gives it) that are new or have changed
 * since `seen` was last updated, oldest first; `seen` is updated to the log.
 */
export function takeChangedDeliveries(seen: Map<string, string>, log: DeliveryEntry[]): DeliveryEntry[] {
  const changed: DeliveryEntry[] = []
  const listed = new Set<string>()
  for (const delivery of [...log].reverse()) {
    const now = fingerprint(delivery)
    if (seen.get(delivery.id) !== now) changed.push(delivery)
    seen.set(delivery.id, now)
    listed.add(delivery.id)
  }
  // Only the log's 50 newest are kept: one pushed out comes back only with a new attempt, which
  // is a change anyway. Keeping every id ever seen grew a --follow left on a busy key for days.
  for (const id of seen.keys()) if (!listed.has(id)) seen.delete(id)
  return changed
}

/** How followDeliveries reads and reports. */
export interface FollowDeliveriesOptions {
  intervalMs: number
  signal: AbortSignal
  onChange: (delivery: DeliveryEntry) => void
  /** After each read that succeeded (its changes reported). */
  onRead?: () => void
  /** A read that failed (after the client's own retries): true goes on at the next interval, false (or none) rejects with it. */
  onReadError?: (error: unknown) => boolean
  /** The log as the caller has just read it (newest first): reported as the first read, the next one an interval later. */
  first?: DeliveryEntry[]
}

/**
 * Reads the key's delivery log every `intervalMs` until `signal` aborts, calling `onChange` with
 * each delivery that is new or changed (a new attempt, a new state), oldest first. The first read
 * reports the whole log.
 */
export async function followDeliveries(client: SandboxClient, options: FollowDeliveriesOptions): Promise<void> {
  const seen = new Map<string, string>()
  let first = options.first
  while (!options.signal.aborted) {
    try {
      const deliveries = first ?? (await client.getWebhook()).deliveries
      first = undefined
      if (options.signal.aborted) return
      for (const delivery of takeChangedDeliveries(seen, deliveries)) options.onChange(delivery)
      options.onRead?.()
    } catch (error) {
      if (options.signal.aborted) return
      if (!options.onReadError?.(error)) throw error
    }
    await sleep(options.intervalMs, undefined, { signal: options.signal }).catch(() => {})
  }
}
