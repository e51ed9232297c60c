import { describe, expect, it } from 'vitest'
import { decodeRecords, encodeRecords, type JournalRecord } from '../../src/storage/journal-format.js'

/** A journal as the previous version wrote it: `<key> <byteLength>` headers, no format line, no checksums. */
function encodeFirstFormat(records: JournalRecord[]): Buffer {
  return Buffer.concat(records.map(({ key, value }) => {
    if (value === null) return Buffer.from(`${key} -1\n`)
    const bytes = Buffer.from(value)
    return Buffer.concat([Buffer.from(`${key} ${bytes.length}\n`), bytes, Buffer.from('\n')])
  }))
}

/** The offset of the header line of `key`'s record (the first one). */
function headerOf(bytes: Buffer, key: string): number {
  return bytes.indexOf(`\n${key} `) + 1
}

describe('journal records', () => {
  const records = [
    { key: 'session:abc:default', value: '{"a":"ü\\n","b":[1,2]}' },
    { key: 'reqlog:000001-000001-3', value: '' },
    { key: 'idem:abc:default:1', value: null },
    { key: 'session:last:default', value: '{"v":1}' },
  ]

  it('starts a journal with its format line and round-trips values with multi-byte characters, empty values and removals', () => {
    const bytes = encodeRecords(records, true)
    expect(bytes.toString('utf8', 0, 19)).toBe('sandbox-journal v2\n')
    expect(decodeRecords(bytes)).toEqual({ records, complete: true })
    expect(encodeRecords(records).subarray(0, 8).toString()).toBe('session:')
    // Appends after the first write go on without the format line.
    expect(decodeRecords(Buffer.concat([bytes, encodeRecords(records)]))).toEqual({ records: [...records, ...records], complete: true })
  })

  it('round-trips many records: unicode keys and values, newlines and spaces in values, removals, large values', () => {
    const many: JournalRecord[] = []
    for (let i = 0; i < 500; i++) {
      const key = `session:ключ-${i}-🔑 ${i % 7}:défaut`
      if (i % 5 === 0) many.push({ key, value: null })
      else many.push({ key, value: JSON.stringify({ i, text: `日本語 ${'ü€\n -1 '.repeat(i % 40)}`, pad: 'x'.repeat(i * 37) }) })
    }
    const bytes = Buffer.concat([encodeRecords(many.slice(0, 100), true), encodeRecords(many.slice(100, 101)), encodeRecords(many.slice(101))])
    expect(decodeRecords(bytes)).toEqual({ records: many, complete: true })
  })

  it('keeps every record before a torn tail, wherever the last write was cut, and never reports it damaged', () => {
    const bytes = encodeRecords(records, true)
    for (let cut = 1; cut < bytes.length; cut++) {
      const decoded = decodeRecords(bytes.subarray(0, cut))
      expect(decoded.records).toEqual(records.slice(0, decoded.records.length))
      // A cut between two records leaves a journal that reads as complete, with fewer records.
      expect([cut, decoded.records.length < records.length, decoded.damagedAt]).toEqual([cut, true, undefined])
    }
    // Cut anywhere in the last record, every record before it is read.
    const last = headerOf(bytes, 'session:last:default')
    for (let cut = last + 1; cut < bytes.length; cut++) expect(decodeRecords(bytes.subarray(0, cut))).toEqual({ records: records.slice(0, 3), complete: false })
  })

  it('reads zeros where the last write should be as a torn tail, as a power cut can leave it', () => {
    const bytes = encodeRecords(records, true)
    const record = encodeRecords([{ key: 'session:z:default', value: '{"v":1}' }])
    const valueAt = record.indexOf('{')
    for (const zeroFrom of [0, 5, valueAt, valueAt + 3, record.length - 1]) {
      const tail = Buffer.concat([bytes, record])
      tail.fill(0, bytes.length + zeroFrom)
      expect([zeroFrom, decodeRecords(tail)]).toEqual([zeroFrom, { records, complete: false }])
    }
    // A journal created, then lost to the power cut before its first write reached the disk.
    expect(decodeRecords(Buffer.alloc(4096))).toEqual({ records: [], complete: false })
  })

  it('reads zeros only as a torn tail: a stray byte where the newline after a value belongs, zeros after it, is damage', () => {
    const bytes = encodeRecords(records, true)
    const record = encodeRecords([{ key: 'session:z:default', value: '{"v":1}' }])
    const stray = Buffer.concat([bytes, record, Buffer.alloc(64)])
    stray[bytes.length + record.length - 1] = 0x58
    expect(decodeRecords(stray)).toEqual({ records, complete: false, damagedAt: bytes.length })
    // The previous format's journals were cut the same way by a power cut: zeros from the value on are a torn tail there too.
    const first = encodeFirstFormat(records)
    const last = encodeFirstFormat([{ key: 'session:z:default', value: '{"v":1}' }])
    const zeroed = Buffer.concat([first, last])
    zeroed.fill(0, first.length + last.indexOf('{'))
    expect(decodeRecords(zeroed)).toEqual({ records, complete: false })
  })

  it('reports a length damaged into a larger one as damage, though it runs past the end of the file', () => {
    const bytes = encodeRecords(records, true)
    const second = headerOf(bytes, 'reqlog:000001-000001-3')
    for (const length of ['1', '9', '100000']) {
      const damaged = Buffer.from(bytes.toString('latin1').replace('reqlog:000001-000001-3 0 ', `reqlog:000001-000001-3 ${length} `), 'latin1')
      expect([length, decodeRecords(damaged)]).toEqual([length, { records: records.slice(0, 1), complete: false, damagedAt: second }])
    }
  })

  it('reports a value altered in place, its length unchanged, as damage instead of replaying it', () => {
    const bytes = encodeRecords(records, true)
    const first = headerOf(bytes, 'session:abc:default')
    const valueAt = bytes.indexOf('{"a"')
    for (const at of [valueAt, valueAt + 6, valueAt + 20]) {
      const damaged = Buffer.from(bytes)
      damaged[at]! ^= 0x01
      expect([at, decodeRecords(damaged)]).toEqual([at, { records: [], complete: false, damagedAt: first }])
    }
  })

  it('reports any single byte changed in a record before the last as damage, with the offset of that record', () => {
    const bytes = encodeRecords(records, true)
    const offsets = records.map((record) => headerOf(bytes, record.key))
    for (let at = offsets[0]!; at < offsets[3]!; at++) {
      const damaged = Buffer.from(bytes)
      damaged[at] = damaged[at] === 0x78 ? 0x79 : 0x78
      const index = offsets.findLastIndex((offset) => offset <= at)
      // A header's newline damaged away joins the line to the next one, which fails its check too.
      expect([at, decodeRecords(damaged)]).toEqual([at, { records: records.slice(0, index), complete: false, damagedAt: offsets[index] }])
    }
  })

  it('reads a journal of the previous format, without format line or checksums, as before', () => {
    const bytes = encodeFirstFormat(records)
    expect(decodeRecords(bytes)).toEqual({ records, complete: true })
    for (let cut = 1; cut < bytes.length; cut++) {
      const decoded = decodeRecords(bytes.subarray(0, cut))
      expect(decoded.records).toEqual(records.slice(0, decoded.records.length))
      // A cut between two records leaves a journal that reads as complete, with fewer records.
      expect([cut, decoded.records.length < records.length, decoded.damagedAt]).toEqual([cut, true, undefined])
    }
    const second = bytes.indexOf('reqlog:')
    const badHeader = Buffer.from(bytes.toString('latin1').replace('reqlog:000001-000001-3 0', 'reqlog:000001-000001-3 0x'), 'latin1')
    expect(decodeRecords(badHeader)).toEqual({ records: records.slice(0, 1), complete: false, damagedAt: second })
    const badLength = Buffer.from(bytes.toString('latin1').replace('reqlog:000001-000001-3 0', 'reqlog:000001-000001-3 4'), 'latin1')
    expect(decodeRecords(badLength)).toEqual({ records: records.slice(0, 1), complete: false, damagedAt: second })
  })
})
