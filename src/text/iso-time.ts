/**
 * An ISO 8601 date (`2027-01-31`, midnight UTC) or date-time, its zone optional here (`Z`, `z` or
 * an offset such as `+01:00` or `-0130`); a space may stand for the `T`. Groups: year, month,
 * day, hour, minute, second, zone.
 */
export const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/

/**
 * Why `text` is not one instant wherever it is read: `not_iso` for a form other than ISO_TIME's
 * (which `Date.parse` may still read, `"1"` as the year 2001), `no_zone` for a date-time without
 * its zone (read in each machine's own zone), or null.
 */
export function describeInstantProblem(text: string): 'not_iso' | 'no_zone' | null {
  const match = ISO_TIME.exec(text.trim())
  if (!match || Number.isNaN(Date.parse(text.trim().replace(' ', 'T').toUpperCase()))) return 'not_iso'
  return match[4] !== undefined && match[7] === undefined ? 'no_zone' : null
}
