import { findFirstExpiry } from './idempotency-batches.js'
import type { SessionDoc } from './session-doc.js'

/**
 * A slot whose document the expiry check is reading: set before the read, so a write meanwhile
 * shows; below any time, so a read that failed leaves the slot to be read at the next check.
 */
const READING = -1

/**
 * When each session's document first holds an idempotency record past retention, as last read or
 * written by this server: the hourly check reads again only a document whose time has come, or
 * that changed since (a save prunes and adds records), instead of every stored one each hour.
 * A slot not held here (a first check after a start, a change of unknown effect) is read.
 * One number per stored session, ~150 B with its slot's text: 15 MB at 100,000 keys (measured).
 * Nothing is kept across a restart: a document's file time does not tell when its first record
 * was made, so the first check after a start reads every document.
 */
export function createExpiryTimes() {
  const firstExpiry = new Map<string, number>()

  return {
    /** Holds the time of the document just written for the slot. */
    learn(slot: string, doc: SessionDoc): void {
      firstExpiry.set(slot, findFirstExpiry(doc))
    },
    /** Drops the slot's time: its document changed in a way not known here, so the next check reads it. */
    forget(slot: string): void {
      firstExpiry.delete(slot)
    },
    /** Whether the slot's document may hold a record past retention at `now` (unknown ones may). */
    mayHoldExpired(slot: string, now: number): boolean {
      const at = firstExpiry.get(slot)
      return at === undefined || at <= now
    },
    /**
     * Marks the slot as being read for a check; the returned settle holds the time of what was
     * read (null: not stored), unless the slot was written or changed meanwhile, whose time wins.
     * A read that fails leaves the slot to be read at the next check.
     */
    beginRead(slot: string): (doc: SessionDoc | null) => void {
      firstExpiry.set(slot, READING)
      return (doc) => {
        if (firstExpiry.get(slot) !== READING) return
        if (doc) firstExpiry.set(slot, findFirstExpiry(doc))
        else firstExpiry.delete(slot)
      }
    },
    /** Drops the times of slots no longer stored (`stored`: every stored slot, as just listed). */
    keepOnly(stored: readonly string[]): void {
      if (firstExpiry.size === 0) return
      const listed = new Set(stored)
      for (const slot of firstExpiry.keys()) if (!listed.has(slot)) firstExpiry.delete(slot)
    },
  }
}
