import { crc32 } from 'node:zlib'

/**
 * The record format of the write-ahead journal. A journal file starts with the format line
 * `sandbox-journal v2`, then each record is a header line `<key> <byteLength> <valueCrc> <lineCrc>`
 * followed by the value bytes and a newline; a removal is `<key> -1 <lineCrc>`. Lengths instead of
 * escaping keep encoding cheap. Both checksums are CRC-32, as 8 hex digits.
 *
 * Two checksums, because a crash and damage must be told apart even when a length runs past the
 * end of the file. A crash cuts the last write short, but a header line that ends in its newline
 * was written whole, so `lineCrc` (over the line before it: key, length and `valueCrc`) is checked
 * before the length is believed: a length damaged into a larger one fails it, where alone it would
 * look like a record cut short and hide every record after it. A header that passes but whose value
 * runs past the end is a write cut short: a torn tail. `valueCrc` (over the value bytes) then
 * catches a value altered in place (bit rot, a stray write) whose length still lines up, which
 * would otherwise be replayed as garbage; being part of the line, it is itself checked by `lineCrc`.
 *
 * The format line is not a header of the first format (whose lines end in a length), so journals
 * written before it, which a user may upgrade over after a crash, are told apart by their first
 * line and read by the first format's rules.
 */

/** One change: a new value for a key, or null for its removal. */
export interface JournalRecord {
  key: string
  value: string | null
}

/** What a journal holds: its readable records, and where damage before its end stopped reading. */
export interface DecodedJournal {
  records: JournalRecord[]
  complete: boolean
  damagedAt?: number
  /**
   * The format line of a journal in a format this version does not know (`sandbox-journal v3`):
   * a newer version's, whose records nothing here can read.
   */
  newerFormat?: string
}

const FORMAT_LINE = Buffer.from('sandbox-journal v2\n')
/** Every format line: `sandbox-journal ` and a version; no header of the first format is one (its keys hold no space). */
const FORMAT_LINE_PATTERN = /^sandbox-journal [\x21-\x7e]{1,40}$/
const NEWLINE = Buffer.from('\n')

function formatCrc(crc: number): string {
  return crc.toString(16).padStart(8, '0')
}

/** Encodes records for one append; `opensJournal` for the first write to a new journal file. */
export function encodeRecords(records: JournalRecord[], opensJournal = false): Buffer {
  const parts: Buffer[] = opensJournal ? [FORMAT_LINE] : []
  for (const { key, value } of records) {
    if (value === null) {
      const line = `${key} -1`
      parts.push(Buffer.from(`${line} ${formatCrc(crc32(line))}\n`))
      continue
    }
    const bytes = Buffer.from(value, 'utf8')
    const line = `${key} ${bytes.byteLength} ${formatCrc(crc32(bytes))}`
    parts.push(Buffer.from(`${line} ${formatCrc(crc32(line))}\n`), bytes, NEWLINE)
  }
  return Buffer.concat(parts)
}

function isZeros(buffer: Buffer, from: number): boolean {
  for (let i = from; i < buffer.length; i++) if (buffer[i] !== 0) return false
  return true
}

/**
 * Decodes every complete record; stops at the first torn or damaged one. A torn tail (the last
 * write cut short by a crash, or zeros to the end) is ignored; a record that fails its checks with
 * bytes after it is damage, and `damagedAt` gives its offset: the records after it cannot be trusted.
 */
export function decodeRecords(buffer: Buffer): DecodedJournal {
  const start = FORMAT_LINE.length
  if (!buffer.subarray(0, start).equals(FORMAT_LINE)) {
    const newerFormat = readOtherFormatLine(buffer)
    // Read by the first format's rules, its format line would be "damage at byte 0".
    return newerFormat === undefined ? decodeFirstFormat(buffer) : { records: [], complete: false, newerFormat }
  }
  const records: JournalRecord[] = []
  let position = start
  while (position < buffer.length) {
    const lineEnd = buffer.indexOf(0x0a, position)
    if (lineEnd === -1) return { records, complete: false }
    // latin1: one character per byte, so offsets in the text are offsets in the buffer.
    const header = buffer.toString('latin1', position, lineEnd)
    const lastSpace = header.lastIndexOf(' ')
    const lineCrc = formatCrc(crc32(buffer.subarray(position, position + lastSpace)))
    const fields = lastSpace > 0 && header.slice(lastSpace + 1) === lineCrc ? /^(.+) (?:-1|(\d+) ([0-9a-f]{8}))$/.exec(header.slice(0, lastSpace)) : null
    if (!fields) return { records, complete: false, damagedAt: position }
    const key = buffer.toString('utf8', position, position + fields[1]!.length)
    if (fields[2] === undefined) {
      records.push({ key, value: null })
      position = lineEnd + 1
      continue
    }
    const valueEnd = lineEnd + 1 + Number(fields[2])
    if (valueEnd >= buffer.length) return { records, complete: false }
    const value = buffer.subarray(lineEnd + 1, valueEnd)
    if (buffer[valueEnd] !== 0x0a || formatCrc(crc32(value)) !== fields[3]) {
      // A record running into zeros that last to the end is a torn tail too: after a power cut
      // some filesystems keep a file's new size but not the data written into it.
      return { records, complete: false, ...(isZeros(buffer, valueEnd) ? {} : { damagedAt: position }) }
    }
    records.push({ key, value: value.toString('utf8') })
    position = valueEnd + 1
  }
  return { records, complete: true }
}

/**
 * The format line of another format than this version's, if the journal starts with a whole one.
 * A format line cut short by a crash (`sandbox-journal v`, no newline) is this version's own torn
 * first write, not a newer format.
 */
function readOtherFormatLine(buffer: Buffer): string | undefined {
  const end = buffer.indexOf(0x0a)
  if (end === -1) return undefined
  const line = buffer.toString('latin1', 0, end)
  // Printable and short: it is quoted in a message, and anything else reads as damage.
  return FORMAT_LINE_PATTERN.test(line) ? line : undefined
}

/** The first format, `<key> <byteLength>` headers without checksums: replayed as it always was. */
function decodeFirstFormat(buffer: Buffer): DecodedJournal {
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
    if (buffer[valueEnd] !== 0x0a) return { records, complete: false, ...(isZeros(buffer, valueEnd) ? {} : { damagedAt: position }) }
    records.push({ key, value: buffer.toString('utf8', lineEnd + 1, valueEnd) })
    position = valueEnd + 1
  }
  return { records, complete: true }
}
