import { describe, expect, it } from 'vitest'
import { parseExpiryTime } from '../../src/cli/expiry-time.js'

describe('keys create --expires-at', () => {
  it('reads a time with its zone, and a date alone as midnight UTC', () => {
    expect(parseExpiryTime('2027-01-31T00:00:00Z')).toBe('2027-01-31T00:00:00.000Z')
    expect(parseExpiryTime('2027-01-31T10:00:00+01:00')).toBe('2027-01-31T09:00:00.000Z')
    expect(parseExpiryTime('2027-01-31T10:00-0530')).toBe('2027-01-31T15:30:00.000Z')
    expect(parseExpiryTime('2027-01-31t10:00:00.250z')).toBe('2027-01-31T10:00:00.250Z')
    expect(parseExpiryTime('2027-01-31 10:00Z')).toBe('2027-01-31T10:00:00.000Z')
    expect(parseExpiryTime('2027-01-31')).toBe('2027-01-31T00:00:00.000Z')
    expect(parseExpiryTime('2028-02-29')).toBe('2028-02-29T00:00:00.000Z')
  })

  it('refuses a time without a zone, which Date.parse reads in the machine zone', () => {
    expect(() => parseExpiryTime('2027-01-31T10:00')).toThrow('--expires-at "2027-01-31T10:00" has no time zone: add Z for UTC (2027-01-31T10:00Z) or an offset such as +01:00')
    expect(() => parseExpiryTime('2027-01-31T10:00:00')).toThrow(/has no time zone/)
  })

  it('refuses days the calendar does not have, which Date.parse moves into the next month', () => {
    expect(() => parseExpiryTime('2027-02-30')).toThrow('--expires-at "2027-02-30": 2027-02 has no day 30')
    expect(() => parseExpiryTime('2027-02-29T00:00:00Z')).toThrow(/has no day 29/)
    expect(() => parseExpiryTime('2027-13-01')).toThrow('--expires-at "2027-13-01": there is no month 13')
    expect(() => parseExpiryTime('2027-04-31')).toThrow(/2027-04 has no day 31/)
    expect(() => parseExpiryTime('2027-01-31T24:00:00Z')).toThrow(/is not a time of day/)
    expect(() => parseExpiryTime('2027-01-31T10:60Z')).toThrow(/is not a time of day/)
  })

  it('refuses the other forms Date.parse takes, with an example', () => {
    for (const text of ['Jan 31 2027', '31/01/2027', '1801353600000', 'tomorrow', '2027-1-31', '']) {
      expect(() => parseExpiryTime(text), text).toThrow(/is not an ISO 8601 date or time \(e\.g\. 2027-01-31T00:00:00Z/)
    }
  })
})
