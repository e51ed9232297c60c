import type { RouteAnswer } from './route-types.js'

/** The answer header that names the body fields a POST ignored (a sandbox addition; see README). */
export const IGNORED_FIELDS_HEADER = 'x-sandbox-ignored-fields'

/** How many ignored fields an answer names, and how long each name may be: a header and a log line stay short. */
const MAX_NAMED = 10
const MAX_NAME_LENGTH = 64
/** How the empty field name is told: a name `""` itself is percent-encoded (`%22%22`), so this is no other. */
const EMPTY_NAME = '""'

/**
 * The ignored fields of a request as its answer tells them: the header (names percent-encoded, as
 * a JSON key can hold anything and a header only visible ASCII; `, ` between them) and the list
 * for the request log. Nothing when no field was ignored.
 */
export function announceIgnoredFields(fields: string[]): Pick<RouteAnswer, 'headers' | 'ignoredFields'> {
  if (fields.length === 0) return {}
  const first = fields.slice(0, MAX_NAMED)
  const more = fields.length > MAX_NAMED ? [`+${fields.length - MAX_NAMED} more`] : []
  // An empty name (`{"": 1}`) would leave the header empty, or an empty item between commas.
  const named = first.map((field) => (field === '' ? EMPTY_NAME : shortenName(field)))
  const encoded = named.map((name, index) => (first[index] === '' ? EMPTY_NAME : encodeURIComponent(name)))
  return { headers: { [IGNORED_FIELDS_HEADER]: [...encoded, ...more].join(', ') }, ignoredFields: [...named, ...more] }
}

/**
 * A name as the header and the log can hold it. encodeURIComponent throws on a lone surrogate,
 * which a JSON key may hold (`"\ud800"`) and a cut through an emoji makes: thrown after the
 * change was stored, the request was a 500 whose replay was a 200. So a lone one becomes U+FFFD,
 * and a cut never ends in the first half of a pair.
 */
function shortenName(field: string): string {
  const whole = field.replace(/\p{Cs}/gu, '\uFFFD')
  if (whole.length <= MAX_NAME_LENGTH) return whole
  const cut = whole.slice(0, MAX_NAME_LENGTH)
  return `${/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut}…`
}
