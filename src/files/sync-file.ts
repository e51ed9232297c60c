import fs from 'node:fs'
import type { FileHandle } from 'node:fs/promises'

// Through the descriptor, not handle.sync()/datasync(): Yarn PnP replaces fs.promises.open with
// one whose FileHandle throws "Method not implemented." for both, and then every write of
// `sandbox serve` (fs storage) and `sandbox keys create` failed. fsync(fd) works under both.

/** Flushes a file's data and metadata to disk (fsync), as FileHandle.sync() does. */
export function syncFile(handle: Pick<FileHandle, 'fd'>): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(handle.fd, (error) => (error ? reject(error) : resolve())))
}

/** Flushes a file's data to disk (fdatasync), as FileHandle.datasync() does. */
export function syncFileData(handle: Pick<FileHandle, 'fd'>): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(handle.fd, (error) => (error ? reject(error) : resolve())))
}
