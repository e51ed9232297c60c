import type * as Fs from 'node:fs'
import type * as Os from 'node:os'
import type * as Path from 'node:path'
import type { MessagePort } from 'node:worker_threads'

/** A batch of file writes for the checkpoint thread; `journals` ends a checkpoint. */
export interface CheckpointRequest {
  id: number
  /** Absolute file paths with their new content, or null to delete the file. */
  entries: Array<[string, string | null]>
  /** Sent with the last batch: once every directory written to is synced, these are deleted. */
  journals?: string[]
}

/** The thread's answer to one request. */
export interface CheckpointReply {
  id: number
  error?: string
}

/**
 * The body of the checkpoint thread. It runs from its source text (`new Worker(code, { eval })`,
 * so that it works the same from `src` under vitest and from `dist`), hence it uses nothing but
 * its parameters. Its synchronous calls block only this thread: the server's event loop and the
 * libuv pool (where the journal's appends and fdatasyncs run) never wait behind a checkpoint.
 */
export function runCheckpointThread(fs: typeof Fs, path: typeof Path, os: typeof Os, port: MessagePort, pid: number, lowPriority: boolean, renameRetry: { delaysMs: readonly number[]; codes: readonly string[] }, modes: { privateDirs: readonly string[]; private: number; shared: number } = { privateDirs: [], private: 0o666, shared: 0o666 }): void {
  // Lowest CPU priority for this thread alone (Linux: a thread id is a pid to setpriority). On a
  // 2-core machine a full-speed checkpoint took the CPU the event loop needed: paced fs p99 41-107
  // ms against ~25 ms at nice 19. It still gets idle CPU, so it catches up as soon as load eases.
  if (lowPriority) {
    try {
      os.setPriority(Number(fs.readlinkSync('/proc/thread-self').split('/').pop()), 19)
    } catch {}
  }
  const knownDirs = new Set<string>()
  let touchedDirs = new Set<string>()
  let counter = 0

  /**
   * Creates a document's directory (the data dir's own, or one of its namespaces), never the data
   * dir itself: one deleted under a running server (`rm -rf .sandbox`) was made again, without its
   * lock, and the server went on writing into it the documents of the state just deleted.
   */
  function ensureDir(dir: string): void {
    if (knownDirs.has(dir)) return
    try {
      fs.mkdirSync(dir)
      // A new directory is an entry in its parent: the parent must be synced too.
      touchedDirs.add(path.dirname(dir))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    knownDirs.add(dir)
  }

  // As renameReplacing (files/rename-replacing.ts), with its delays and codes, inline and
  // blocking: this body can import nothing, and this thread has nothing else to do meanwhile.
  const pause = new Int32Array(new SharedArrayBuffer(4))
  function renameReplacing(from: string, to: string): void {
    for (let attempt = 0; ; attempt++) {
      try {
        return fs.renameSync(from, to)
      } catch (error) {
        const held = os.platform() === 'win32' && renameRetry.codes.includes((error as NodeJS.ErrnoException).code ?? '')
        if (!held || attempt >= renameRetry.delaysMs.length) throw error
        Atomics.wait(pause, 0, 0, renameRetry.delaysMs[attempt])
      }
    }
  }

  function writeAtomically(target: string, value: string): void {
    const dir = path.dirname(target)
    ensureDir(dir)
    touchedDirs.add(dir)
    const temp = `${target}.${pid}-c${++counter}.tmp`
    // Any failure removes the temp file: on a full disk a write leaves it partly written, and
    // each retried checkpoint left another (62 in 10 s on a full tmpfs), holding the space that
    // the journal needed to recover.
    try {
      // As chooseFileMode (file-modes.ts) says, inline: this body can import nothing.
      const fd = fs.openSync(temp, 'w', modes.privateDirs.includes(path.basename(dir)) ? modes.private : modes.shared)
      try {
        fs.writeFileSync(fd, value)
        fs.fsyncSync(fd)
      } finally {
        fs.closeSync(fd)
      }
      renameReplacing(temp, target)
    } catch (error) {
      try {
        fs.unlinkSync(temp)
      } catch {}
      throw error
    }
  }

  function remove(target: string): void {
    try {
      fs.unlinkSync(target)
      touchedDirs.add(path.dirname(target))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }

  // As canSyncDirectories (journal-files.ts) says, inline: this body can import nothing.
  const syncsDirectories = os.platform() !== 'win32'

  function syncDir(dir: string): void {
    if (!syncsDirectories) return
    const fd = fs.openSync(dir, 'r')
    try {
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
  }

  port.on('message', (request: CheckpointRequest) => {
    try {
      for (const [target, value] of request.entries) {
        if (value === null) remove(target)
        else writeAtomically(target, value)
      }
      if (request.journals) {
        for (const dir of touchedDirs) syncDir(dir)
        touchedDirs = new Set()
        for (const journal of request.journals) remove(journal)
      }
      port.postMessage({ id: request.id } satisfies CheckpointReply)
    } catch (error) {
      // Directories stay marked: the next checkpoint writes these files again and syncs them all.
      knownDirs.clear()
      port.postMessage({ id: request.id, error: (error as Error).message } satisfies CheckpointReply)
    }
  })
}
