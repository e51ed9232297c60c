/**
 * The record format of the write-ahead journal: a header line `<key> <byteLength>` (or
 * `<key> -1` for a removal) followed by the value bytes and a newline. Lengths instead of escaping
 * keep encoding cheap; a torn tail (from a crash mid-write) is recognised and ignored.
 */

/** One change: a new value for a key, or null for its removal. */
export interface JournalRecord {
  key: string
  value: string | null
}

/** Encodes records for one append. */
export function encodeRecords(records: JournalRecord[]): Buffer {
  const parts: Buffer[] = []
  for (const { key, value } of records) {
    if (value === null) {
      parts.push(Buffer.from(`${key} -1\n`))
      continue
    }
    const bytes = Buffer.from(value, 'utf8')
    parts.push(Buffer.from(`${key} ${bytes.byteLength}\n`), bytes, Buffer.from('\n'))
  }
  return Buffer.concat(parts)
}

function isZeros(buffer: Buffer, from: number): boolean {
  for (let i = from; i < buffer.length; i++) if (buffer[i] !== 0) return false
  return true
}

/**
 * Decodes every complete record; stops at the first torn or malformed one. A torn tail (a write cut
 * short: the last record runs past the end) is what a crash leaves; a malformed record with bytes
 * after it is damage, and `damagedAt` gives its offset: the records after it cannot be found.
 */
export function decodeRecords(buffer: Buffer): { records: JournalRecord[]; complete: boolean; damagedAt?: number } {
  const records: JournalRecord[] = []
  let position = 0
  while (position < buffer.length) {
    const lineEnd = buffer.indexOf(0x0a, position)
    if (lineEnd === -1) return { records, complete: false }
    const header = buffer.toString('utf8', position, lineEnd)
    const space = header.lastIndexOf(' ')
    const key = header.slice(0, space)
    const length = Number(header.slice(space + 1))
    if (space <= 0 || !/^(-1|\d+)$/.test(header.slice(space + 1))) return { records, complete: false, damagedAt: position }
    if (length === -1) {
      records.push({ key, value: null })
      position = lineEnd + 1
      continue
    }
    const valueEnd = lineEnd + 1 + length
    if (valueEnd >= buffer.length) return { records, complete: false }
    // Zeros to the end are a torn tail too: after a power cut some filesystems keep a file's new
    // size but not the data written into it.
    if (buffer[valueEnd] !== 0x0a) return { records, complete: false, ...(isZeros(buffer, valueEnd) ? {} : { damagedAt: position }) }
    records.push({ key, value: buffer.toString('utf8', lineEnd + 1, valueEnd) })
    position = valueEnd + 1
  }
  return { records, complete: true }
}
