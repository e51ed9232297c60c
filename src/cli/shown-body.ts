/** Body text past this many characters is cut where it is shown: a loan history can run to megabytes. */
export const SHOWN_BODY_CHARS = 4000

/** TEXT cut to SHOWN_BODY_CHARS, saying how much was left out. */
export function clipBody(text: string): string {
  return text.length > SHOWN_BODY_CHARS ? `${text.slice(0, SHOWN_BODY_CHARS)}... (${text.length - SHOWN_BODY_CHARS} more characters)` : text
}

/**
 * TEXT with every webhook signing secret (`"signingSecret":"whsec_..."`, and `secret` in a body
 * that sets one) masked to its last 4 characters: a log collected in CI must not carry a secret
 * that signs deliveries, while the last characters still tell two apart.
 */
export function maskSecrets(text: string): string {
  return text.replace(/("(?:signingSecret|signing_secret|secret)"\s*:\s*")(whsec_)?([^"\\]*)(")/g, (_, open: string, prefix = '', value: string, close: string) => `${open}${prefix}****${value.length > 8 ? value.slice(-4) : ''}${close}`)
}
