import type { Storage } from 'unstorage'
import { deriveKeyId } from './auth.js'

/** One line of a key's request log (the spec's "partner dashboard" log). */
export interface RequestLogEntry {
  request_id: string
  at: string
  /** The API key, masked; null when the request carried no usable key. */
  key: string | null
  method: string
  path: string
  status: number
  error_code: string | null
  idempotency_key: string | null
  duration_ms: number
}

/** Entries kept per key; older ones roll off. */
export const REQUEST_LOG_SIZE = 1000
const FLUSH_INTERVAL_MS = 500

function logKey(keyId: string): string {
  return `reqlog:${keyId}`
}

/**
 * Collects request log entries in memory and writes each key's log at most every
 * FLUSH_INTERVAL_MS, off the request path, so logging never slows an answer down.
 */
export function createRequestLog(storage: Storage) {
  const logs = new Map<string, { entries: RequestLogEntry[]; loaded: boolean }>()
  const dirty = new Set<string>()
  let flushing: Promise<void> | undefined
  const timer = setInterval(() => void flush(), FLUSH_INTERVAL_MS)
  timer.unref()

  /** Records one entry for a key (by key id). */
  function record(keyId: string, entry: RequestLogEntry): void {
    let log = logs.get(keyId)
    if (!log) {
      log = { entries: [], loaded: false }
      logs.set(keyId, log)
    }
    log.entries.push(entry)
    dirty.add(keyId)
  }

  async function writeKey(keyId: string): Promise<void> {
    const log = logs.get(keyId)!
    if (!log.loaded) {
      const stored = (await storage.getItem<RequestLogEntry[]>(logKey(keyId))) ?? []
      // Read entries after the await: ones recorded meanwhile are included.
      log.entries = [...stored, ...log.entries]
      log.loaded = true
    }
    if (log.entries.length > REQUEST_LOG_SIZE) log.entries = log.entries.slice(-REQUEST_LOG_SIZE)
    await storage.setItem(logKey(keyId), log.entries)
    // Idle keys leave memory; the next entry reloads the stored log first.
    if (!dirty.has(keyId)) logs.delete(keyId)
  }

  /** Writes every key whose log changed since the last flush. */
  function flush(): Promise<void> {
    flushing ??= (async () => {
      try {
        const keys = [...dirty]
        dirty.clear()
        // A failed write stays dirty and is tried again at the next flush.
        await Promise.all(keys.map((keyId) => writeKey(keyId).catch(() => dirty.add(keyId))))
      } finally {
        flushing = undefined
      }
    })()
    return flushing
  }

  /** Stops the timer and writes what is pending. */
  async function close(): Promise<void> {
    clearInterval(timer)
    await flushing
    await flush()
  }

  return { record, flush, close }
}

/** A log made by createRequestLog. */
export type RequestLog = ReturnType<typeof createRequestLog>

/**
 * Reads stored request logs, oldest first: one key's when `apiKey` is given, otherwise every
 * key's, merged by time.
 */
export async function readRequestLog(storage: Storage, options: { apiKey?: string; limit?: number } = {}): Promise<RequestLogEntry[]> {
  const keys = options.apiKey ? [logKey(deriveKeyId(options.apiKey))] : await storage.getKeys('reqlog')
  const logs = await Promise.all(keys.map((key) => storage.getItem<RequestLogEntry[]>(key)))
  const entries = logs.flatMap((log) => log ?? []).sort((a, b) => a.at.localeCompare(b.at))
  return options.limit ? entries.slice(-options.limit) : entries
}
