import { afterEach, describe, expect, it, vi } from 'vitest'
import { printError } from '../../src/cli/serve-log-lines.js'
import { createStorageErrorGate, STORAGE_ERROR_QUIET_MS } from '../../src/cli/storage-error-gate.js'
import { StorageError } from '../../src/storage/storage-error.js'

afterEach(() => {
  vi.restoreAllMocks()
})

/** What serve writes to stderr and stdout while storage keeps failing, one error per clock reading in TIMES. */
function printStorageErrors(times: number[], json: boolean): string[] {
  const lines: string[] = []
  const capture = (chunk: string | Uint8Array) => { lines.push(String(chunk)); return true }
  vi.spyOn(process.stderr, 'write').mockImplementation(capture)
  vi.spyOn(process.stdout, 'write').mockImplementation(capture)
  let time = 0
  const gate = createStorageErrorGate(() => time)
  for (const at of times) {
    time = at
    printError(new StorageError('storage failed to write session:k:default: ENOSPC: no space left on device, write'), json, gate)
  }
  vi.restoreAllMocks()
  return lines
}

describe('serve\'s storage error lines', () => {
  it('print the first error, then after the quiet time one line that counts the errors left out', () => {
    const lines = printStorageErrors([0, 1, 2, STORAGE_ERROR_QUIET_MS], false)
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^storage error: storage failed to write session:k:default: ENOSPC: no space left on device, write \(the disk of the data dir is full: free space on it; .*\)\n$/)
    expect(lines[1]).toMatch(/\); 2 more storage errors since the last line\n$/)
  })

  it('with --json-logs, give the count as more_errors', () => {
    const lines = printStorageErrors([0, 1, 2, STORAGE_ERROR_QUIET_MS], true).map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(lines.map((line) => [line.event, line.more_errors])).toEqual([['storage_error', undefined], ['storage_error', 2]])
  })
})
