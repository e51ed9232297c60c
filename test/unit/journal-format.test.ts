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
    }
    expect(decodeRecords(bytes.subarray(0, 10)).complete).toBe(false)
  })
})
