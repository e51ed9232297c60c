import { ISO_TIME } from '../text/iso-time.js'

/**
 * Reads a `--expires-at` value as an instant, as ISO text in UTC: an ISO 8601 date
 * (`2027-01-31`, midnight UTC) or date-time with a zone (`2027-01-31T09:00:00Z`,
 * `2027-01-31T10:00+01:00`). Throws an Error whose message says what to write instead: for
 * another form, a day the calendar does not have (`2027-02-30`, which `Date.parse` turns into
 * 2 March) or a date-time without its zone, refused rather than read in the machine's zone: the
 * keys file is often made on a laptop and used in CI, where the zone differs.
 */
export function parseExpiryTime(text: string): string {
  const example = 'e.g. 2027-01-31T00:00:00Z, 2027-01-31T10:00:00+01:00 or 2027-01-31 (midnight UTC)'
  const match = ISO_TIME.exec(text.trim())
  if (!match) throw new Error(`--expires-at "${text}" is not an ISO 8601 date or time (${example})`)
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[]
  if (month! < 1 || month! > 12) throw new Error(`--expires-at "${text}": there is no month ${match[2]}`)
  const date = new Date(Date.UTC(year!, month! - 1, day!))
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month! - 1 || date.getUTCDate() !== day) {
    throw new Error(`--expires-at "${text}": ${match[1]}-${match[2]} has no day ${match[3]}`)
  }
  if (match[4] !== undefined && (hour! > 23 || minute! > 59 || (second ?? 0) > 59)) {
    throw new Error(`--expires-at "${text}" is not a time of day (${example})`)
  }
  if (match[4] !== undefined && match[7] === undefined) {
    throw new Error(`--expires-at "${text}" has no time zone: add Z for UTC (${text.trim()}Z) or an offset such as +01:00`)
  }
  const at = Date.parse(text.trim().replace(' ', 'T').toUpperCase())
  if (Number.isNaN(at)) throw new Error(`--expires-at "${text}" is not an ISO 8601 date or time (${example})`)
  return new Date(at).toISOString()
}
