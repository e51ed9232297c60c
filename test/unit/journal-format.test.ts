import { describe, expect, it } from 'vitest'
import { decodeRecords, encodeRecords } from '../../src/storage/journal-format.js'

describe('journal records', () => {
  const records = [
    { key: 'session:abc:default', value: '{"a":"ü\\n","b":[1,2]}' },
    { key: 'reqlog:000001-000001-3', value: '' },
    { key: 'idem:abc:default:1', value: null },
  ]

  it('round-trips values with multi-byte characters, empty values and removals', () => {
    expect(decodeRecords(encodeRecords(records))).toEqual({ records, complete: true })
  })

  it('keeps every complete record of a torn tail and reports it incomplete', () => {
    const bytes = encodeRecords(records)
    for (let cut = 1; cut < bytes.length; cut++) {
      const { records: decoded } = decodeRecords(bytes.subarray(0, cut))
      expect(decoded).toEqual(records.slice(0, decoded.length))
      expect(decoded.length).toBeLessThan(records.length)
      // A crash's torn tail is not damage.
      expect(decodeRecords(bytes.subarray(0, cut)).damagedAt).toBeUndefined()
    }
    expect(decodeRecords(bytes.subarray(0, 10)).complete).toBe(false)
  })

  it('tells damage before the end from a torn tail, with the offset of the first record it cannot read', () => {
    const bytes = encodeRecords(records)
    const second = bytes.indexOf('reqlog:')
    const badHeader = Buffer.from(bytes.toString('latin1').replace('reqlog:000001-000001-3 0', 'reqlog:000001-000001-3 0x'), 'latin1')
    expect(decodeRecords(badHeader)).toEqual({ records: records.slice(0, 1), complete: false, damagedAt: second })
    // A length that no longer ends at the record's newline.
    const badLength = Buffer.from(bytes.toString('latin1').replace('reqlog:000001-000001-3 0', 'reqlog:000001-000001-3 4'), 'latin1')
    expect(decodeRecords(badLength)).toEqual({ records: records.slice(0, 1), complete: false, damagedAt: second })
  })

  it('reads zeros where the last write should be as a torn tail, as a power cut can leave it', () => {
    const bytes = encodeRecords(records)
    const value = Buffer.from('{"v":1}')
    const record = Buffer.concat([Buffer.from(`session:z:default ${value.length}\n`), value, Buffer.from('\n')])
    for (const zeroFrom of [record.length - 4, record.length - 1, 'session:z:default 7\n'.length]) {
      const tail = Buffer.concat([bytes, record])
      tail.fill(0, bytes.length + zeroFrom)
      const { records: decoded, damagedAt } = decodeRecords(tail)
      expect([zeroFrom, decoded, damagedAt]).toEqual([zeroFrom, records, undefined])
    }
  })
})
