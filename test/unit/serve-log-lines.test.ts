import { afterEach, describe, expect, it, vi } from 'vitest'
import { parseDuration } from '../../src/cli/duration-text.js'
import * as Output from '../../src/cli/output.js'
import { printError, printKeysForgotten } from '../../src/cli/serve-log-lines.js'
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

describe('serve\'s line for a sweep of --forget-idle-keys', () => {
  it('says the duration as the README and its users write it: 7d, not 1w', () => {
    const lines: string[] = []
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => { lines.push(String(chunk)); return true })
    printKeysForgotten(Output, 3, parseDuration('7d'), false)
    printKeysForgotten(Output, 3, parseDuration('7d'), true)
    vi.restoreAllMocks()
    expect(lines[0]).toMatch(/ keys: forgot 3 keys unused for more than 7d \(--forget-idle-keys\); their next request starts empty\n$/)
    expect(JSON.parse(lines[1]!)).toMatchObject({ event: 'keys_forgotten', count: 3, forget_idle_keys: '7d' })
  })
})
