import { Worker } from 'node:worker_threads'
import { runCheckpointThread, type CheckpointReply, type CheckpointRequest } from './checkpoint-thread.js'
import { HELD_RENAME_CODES, RENAME_RETRY_DELAYS_MS } from '../files/rename-replacing.js'
import { PRIVATE_FILE_MODE, PRIVATE_NAMESPACES, SHARED_FILE_MODE } from './file-modes.js'

/** Entries per message: bounds what the thread holds at once (~11 KB a session document). */
const BATCH_ENTRIES = 256

/** Writes checkpoints into files on a thread of its own. */
export interface CheckpointWriter {
  /**
   * Writes every entry (temp file, fsync, rename; null deletes), syncs the directories written
   * to, then deletes `journals`. Rejects if any step fails; the journals are then left in place.
   */
  write(entries: Array<[string, string | null]>, journals: string[]): Promise<void>
  /**
   * From the next batch on, writes run on a thread at normal priority: for a stop, which waits on
   * them with nothing else to run. (A thread at nice 19 cannot raise itself back without privileges.)
   */
  raisePriority(): void
  /** Waits for the current write and ends the thread. */
  close(): Promise<void>
}

interface Waiting {
  resolve: () => void
  reject: (error: Error) => void
}

/** Options of the checkpoint writer. */
export interface CheckpointWriterOptions {
  /**
   * Run the thread at nice 19 (the default), for checkpoints beside a serving event loop. Off for
   * work the process waits on with nothing else to do (a startup's replay), which at nice 19 got
   * almost no CPU beside other processes on one core.
   */
  lowPriority?: boolean
}

/**
 * Starts the checkpoint thread at once and keeps it until close (it costs ~7 MB). Starting it
 * later, on demand, would undo the young-generation cap: V8 sets the semi-space growth factor
 * back to its minimum of 2 whenever an isolate is created (measured: 4 MB -> 32 MB).
 */
export function createCheckpointWriter(options: CheckpointWriterOptions = {}): CheckpointWriter {
  let lowPriority = options.lowPriority ?? true
  let thread: { worker: Worker; waiting: Map<number, Waiting>; lowPriority: boolean } | undefined
  let nextId = 0
  let current: Promise<void> = Promise.resolve()

  function startThread(): NonNullable<typeof thread> {
    const source = `(${runCheckpointThread.toString()})(require('node:fs'), require('node:path'), require('node:os'), require('node:worker_threads').parentPort, ${process.pid}, ${lowPriority}, ${JSON.stringify({ delaysMs: RENAME_RETRY_DELAYS_MS, codes: HELD_RENAME_CODES })}, ${JSON.stringify({ privateDirs: PRIVATE_NAMESPACES, private: PRIVATE_FILE_MODE, shared: SHARED_FILE_MODE })})`
    const worker = new Worker(source, { eval: true })
    worker.unref()
    const waiting = new Map<number, Waiting>()
    worker.on('message', (reply: CheckpointReply) => {
      const entry = waiting.get(reply.id)
      waiting.delete(reply.id)
      if (reply.error === undefined) entry?.resolve()
      else entry?.reject(new Error(`checkpoint failed: ${reply.error}`))
    })
    const fail = (error: Error) => {
      if (thread?.worker === worker) thread = undefined
      for (const entry of waiting.values()) entry.reject(error)
      waiting.clear()
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`checkpoint thread exited (${code})`)))
    return { worker, waiting, lowPriority }
  }

  function sendTo(target: NonNullable<typeof thread>, request: Omit<CheckpointRequest, 'id'>): Promise<void> {
    const id = ++nextId
    const promise = new Promise<void>((resolve, reject) => target.waiting.set(id, { resolve, reject }))
    target.worker.postMessage({ id, ...request } satisfies CheckpointRequest)
    return promise
  }

  /**
   * Ends a thread whose priority is no longer wanted. It syncs the directories it wrote to first
   * (an empty list of journals deletes none): a checkpoint moved between batches deletes its
   * journals from the new thread, which knows only its own directories.
   */
  async function retireThread(old: NonNullable<typeof thread>): Promise<void> {
    if (thread === old) thread = undefined
    try {
      await sendTo(old, { entries: [], journals: [] })
    } finally {
      // A failed sync fails this checkpoint: its journals stay and the next one writes it all again.
      await old.worker.terminate()
    }
  }

  async function send(request: Omit<CheckpointRequest, 'id'>): Promise<void> {
    if (thread && thread.lowPriority !== lowPriority) await retireThread(thread)
    thread ??= startThread()
    return sendTo(thread, request)
  }

  async function writeAll(entries: Array<[string, string | null]>, journals: string[]): Promise<void> {
    let start = 0
    do {
      const batch = entries.slice(start, start + BATCH_ENTRIES)
      start += BATCH_ENTRIES
      await send(start >= entries.length ? { entries: batch, journals } : { entries: batch })
    } while (start < entries.length)
  }

  async function stopThread(): Promise<void> {
    const running = thread
    thread = undefined
    if (running) await running.worker.terminate()
  }

  thread = startThread()
  return {
    write(entries, journals) {
      current = current.catch(() => {}).then(() => writeAll(entries, journals))
      return current
    },
    raisePriority() {
      lowPriority = false
    },
    async close() {
      await current.catch(() => {})
      await stopThread()
    },
  }
}
