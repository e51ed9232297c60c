/** Body text past this many characters is cut where it is shown: a loan history can run to megabytes. */
export const SHOWN_BODY_CHARS = 4000

/** Fields whose string value is a webhook signing secret (an answer's, or one a body sets). */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(['signingSecret', 'signing_secret', 'secret'])

/** TEXT cut to SHOWN_BODY_CHARS, saying how much was left out. */
export function clipBody(text: string): string {
  return text.length > SHOWN_BODY_CHARS ? `${text.slice(0, SHOWN_BODY_CHARS)}... (${text.length - SHOWN_BODY_CHARS} more characters)` : text
}

/** One signing secret as output shows it: its `whsec_` prefix and, past 8 characters, its last 4. */
export function maskSecret(value: string): string {
  const prefix = value.startsWith('whsec_') ? 'whsec_' : ''
  const rest = value.slice(prefix.length)
  return `${prefix}****${rest.length > 8 ? rest.slice(-4) : ''}`
}

/**
 * `"field":"value"` for each of SECRET_FIELDS (their names are plain words: no escaping needed).
 * The value may hold escapes: PHP's json_encode writes a base64 secret's `/` as `\/`.
 */
const SECRET_IN_TEXT = new RegExp(`("(?:${[...SECRET_FIELDS].join('|')})"\\s*:\\s*")((?:[^"\\\\]|\\\\.)*)(")`, 'g')

/** A JSON string's escaped text masked by its value, written back as JSON string text. */
function maskEscapedSecret(escaped: string): string {
  let value: string
  try {
    value = JSON.parse(`"${escaped}"`) as string
  } catch {
    // Not valid JSON text: nothing of it can be shown.
    return '****'
  }
  return JSON.stringify(maskSecret(value)).slice(1, -1)
}

/**
 * TEXT with every webhook signing secret (`"signingSecret":"whsec_..."`, and `secret` in a body
 * that sets one) masked to its last 4 characters: a log collected in CI must not carry a secret
 * that signs deliveries, while the last characters still tell two apart.
 */
export function maskSecrets(text: string): string {
  return text.replace(SECRET_IN_TEXT, (_, open: string, value: string, close: string) => `${open}${maskEscapedSecret(value)}${close}`)
}

/**
 * `scheme://userinfo@` in JSON text: the user part may hold JSON escapes (`\"`, `\/`), and ends
 * before the first `/`, `?`, `#`, quote or blank, as a URL's authority does.
 */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)((?:[^/?#@"\s\\]|\\.)+)@/gi

/**
 * TEXT with the password of every URL in it shown as `***`, and a user part with no password (a
 * token sent as basic auth) too, as maskUrlPassword shows a URL that serve prints.
 */
export function maskUrlCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, (_, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':')
    return `${scheme}${colon === -1 ? '***' : `${userinfo.slice(0, colon)}:***`}@`
  })
}

/** TEXT as a log shows a body: secrets and URL passwords masked first (a cut could split one), then cut. */
export function showBody(text: string): string {
  return clipBody(maskUrlCredentials(maskSecrets(text)))
}

/** VALUE (a parsed body) copied with every signing secret masked as maskSecrets masks it in text. */
export function maskSecretValues(value: unknown, field?: string): unknown {
  if (typeof value === 'string') return field !== undefined && SECRET_FIELDS.has(field) ? maskSecret(value) : value
  if (Array.isArray(value)) return value.map((item) => maskSecretValues(item))
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, maskSecretValues(item, name)]))
}
