import type { guardStorage } from '../storage/storage-error.js'
import { StorageError } from '../storage/storage-error.js'
import type { Delivery } from '../webhooks/types.js'
import type { Principal } from './auth.js'
import { sessionSlotOf } from './session-doc.js'

/** The storage prefix of spilled webhook delivery batches. */
export const SPILL_PREFIX = 'whq'

/** Where a batch of waiting webhook deliveries moved out of the document is kept (delivery-spill.ts). */
export function spillKey(keyId: string, sessionId: string, batch: number): string {
  return `${SPILL_PREFIX}:${keyId}:${sessionId}:${batch}`
}

/** Reads, lists and deletes the spilled batches of waiting webhook deliveries in storage. */
export function createSpilledDeliveries(files: ReturnType<typeof guardStorage>) {
  /** The deliveries of a spilled batch (see delivery-spill.ts). */
  async function readSpilled(principal: Principal, batch: number): Promise<Delivery[]> {
    const deliveries = await files.getItem<Delivery[]>(spillKey(principal.keyId, principal.sessionId, batch))
    if (!Array.isArray(deliveries)) throw new StorageError(`spilled webhook deliveries ${batch} of the session are missing`)
    return deliveries
  }

  /** Every spilled batch in storage, by session slot. */
  async function listSpilled(): Promise<Map<string, number[]>> {
    const bySlot = new Map<string, number[]>()
    for (const key of await files.getKeys(SPILL_PREFIX)) {
      const [, keyId, sessionId, batch] = key.split(':')
      if (!keyId || !sessionId || !/^\d+$/.test(batch ?? '')) continue
      const slot = sessionSlotOf({ keyId, sessionId })
      const batches = bySlot.get(slot)
      if (batches) batches.push(Number(batch))
      else bySlot.set(slot, [Number(batch)])
    }
    return bySlot
  }

  /** Deletes a spilled batch once the document holds its deliveries again. */
  async function removeSpilled(principal: Principal, batch: number): Promise<void> {
    await files.removeItem(spillKey(principal.keyId, principal.sessionId, batch))
  }

  return { readSpilled, listSpilled, removeSpilled }
}
