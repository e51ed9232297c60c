import { performance } from 'node:perf_hooks'
import { deflateRawSync, inflateRawSync } from 'node:zlib'
import type { Driver } from 'unstorage'

/** Shorter values are not worth compressing. */
const COMPRESS_MIN_CHARS = 1024
/** A value not rewritten for this long is compressed. */
const COLD_MS = 2_000
const TICK_MS = 250
/**
 * Compression time per tick: a sliver while requests write, more once writes have stopped, and
 * never so much at once that a request arriving meanwhile waits long for it.
 */
const BUSY_BUDGET_MS = 2
const IDLE_BUDGET_MS = 40
const IDLE_AFTER_MS = 1_000
/** Largest value compressed while requests are writing (~0.3 ms of deflate). */
const BUSY_MAX_CHARS = 64 * 1024

/** Under Node's pooled-allocation size (half of Buffer.poolSize), see `compress`. */
const OUTPUT_CHUNK_BYTES = 2048

/** A compressed value: the raw deflate of its UTF-8 bytes, one byte per char of a heap string. */
class Packed {
  constructor(readonly text: string) {}
}

/** Options of createCompactMemoryDriver (tests shorten the delays). */
export interface MemoryDriverOptions {
  coldMs?: number
  tickMs?: number
}

/**
 * unstorage's memory driver, except that text values are compressed once they have not been
 * rewritten for a while. Memory storage holds every key's session document, mostly JSON that
 * compresses several times over, and most keys go quiet after a few requests (measured: after a
 * load that made 5,000 keys, 100 MB of heap in use, 30 MB with the documents compressed).
 *
 * The compressed bytes are kept as heap strings, not Buffers: freed Buffers return to malloc,
 * which rarely gives memory back to the system, while V8 compacts its heap and releases pages.
 */
export function createCompactMemoryDriver(options: MemoryDriverOptions = {}): Driver {
  const coldMs = options.coldMs ?? COLD_MS
  const data = new Map<string, unknown>()
  /** Uncompressed text values by key, oldest write first, with the time of their write. */
  const loose = new Map<string, number>()
  let lastWrite = 0
  let scratch = Buffer.alloc(0)
  let timer: NodeJS.Timeout | undefined

  /**
   * Compresses through a reused input buffer and small output chunks (from Node's Buffer pool):
   * thousands of compressions otherwise leave tens of MB of large garbage Buffers, whose freed
   * memory malloc keeps.
   */
  function compress(text: string): Buffer {
    const size = Buffer.byteLength(text, 'utf8')
    if (scratch.length < size) scratch = Buffer.allocUnsafe(Math.max(size, scratch.length * 2, 64 * 1024))
    scratch.write(text, 0, 'utf8')
    return deflateRawSync(scratch.subarray(0, size), { chunkSize: OUTPUT_CHUNK_BYTES })
  }

  function unpack(value: unknown): unknown {
    return value instanceof Packed ? inflateRawSync(Buffer.from(value.text, 'latin1')).toString('utf8') : value
  }

  function store(key: string, value: unknown): void {
    loose.delete(key)
    data.set(key, value)
    if (typeof value === 'string' && value.length >= COMPRESS_MIN_CHARS) {
      lastWrite = performance.now()
      loose.set(key, lastWrite)
      // Ticks only while values wait: an idle process is not woken for nothing.
      if (!timer) {
        timer = setInterval(compactCold, options.tickMs ?? TICK_MS)
        timer.unref()
      }
    }
  }

  function stopTicking(): void {
    clearInterval(timer)
    timer = undefined
  }

  function compactCold(): void {
    const now = performance.now()
    const idle = now - lastWrite >= IDLE_AFTER_MS
    const budget = idle ? IDLE_BUDGET_MS : BUSY_BUDGET_MS
    for (const [key, writtenAt] of loose) {
      if (now - writtenAt < coldMs || performance.now() - now >= budget) return
      // Only text values enter `loose`, and leave it when rewritten or removed.
      const value = data.get(key) as string
      // A large value takes milliseconds to compress, time a request would wait: it waits for idle.
      if (!idle && value.length > BUSY_MAX_CHARS) continue
      loose.delete(key)
      const bytes = compress(value)
      if (bytes.length < value.length * 0.9) data.set(key, new Packed(bytes.toString('latin1')))
    }
    if (loose.size === 0) stopTicking()
  }

  return {
    name: 'memory',
    hasItem: (key) => data.has(key),
    getItem: (key) => unpack(data.get(key)) ?? null,
    getItemRaw: (key) => unpack(data.get(key)) ?? null,
    setItem: store,
    setItemRaw: store,
    removeItem(key) {
      data.delete(key)
      loose.delete(key)
    },
    getKeys: () => [...data.keys()],
    getInstance: () => data,
    clear() {
      data.clear()
      loose.clear()
    },
    dispose() {
      stopTicking()
      data.clear()
      loose.clear()
    },
  }
}
