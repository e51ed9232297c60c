import type { StorageError } from './storage-error.js'

/** How long committed changes wait in the journal before they are written to their files. */
export const CHECKPOINT_DELAY_MS = 250

/** How often the journal is made durable on disk (fdatasync), apart from the requests. */
export const SYNC_INTERVAL_MS = 1000

/**
 * Text committed to the journal but not yet in its files (held in memory) past which new writes
 * wait for a checkpoint. The checkpoint thread runs at the lowest priority, so a load that keeps
 * every core busy would otherwise grow this without bound.
 */
export const MAX_PENDING_CHARS = 128 * 1024 * 1024

/** Options of the journaled fs driver. */
export interface JournaledFsOptions {
  base: string
  /** Told when a checkpoint fails while the driver runs (not once disposed, whose stop reports it). */
  onCheckpointError?: (error: StorageError) => void
  checkpointDelayMs?: number
  maxPendingChars?: number
}
