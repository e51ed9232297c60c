import { SetupError } from '../errors/setup-error.js'
import { maskCredentials, maskUrlPassword } from '../text/url-password.js'
import { isSecretPreview } from '../text/secret-preview.js'

/**
 * Checks a `--webhook-forward-to` URL (http or https; local targets are the point of it) and
 * returns it normalized. Throws SetupError naming the flag, so the CLI exits 2.
 */
export function parseForwardUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new SetupError(`--webhook-forward-to "${maskCredentials(text)}" is not a URL (e.g. http://localhost:3000/webhooks)`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SetupError(`--webhook-forward-to must be an http(s) URL, not ${url.protocol}`)
  // Port 0 is "any free port" to a listener, but nothing can be reached at it: every delivery would fail.
  if (url.port === '0') throw new SetupError(`--webhook-forward-to needs the port your receiver listens on; port 0 cannot be connected to (got "${maskUrlPassword(text)}")`)
  return url.href
}

/**
 * A forward secret given by the operator (`--webhook-forward-secret`): `whsec_` and at least 16
 * printable characters, so that a CI job's receiver can hold it before `serve` starts. The
 * deliveries are signed with the whole string, as with a generated one.
 */
export function parseForwardSecret(text: string, source = '--webhook-forward-secret'): string {
  if (!/^whsec_[\x21-\x7e]{16,}$/.test(text)) {
    const bare = text.trim()
    // Counted without a final newline (a CI secret saved with one): "17 characters" left its reader counting.
    const shown = isSecretPreview(bare) ? 'a secret\'s preview (whsec_... and its last 4 characters, as serve\'s start line shows a secret it was given), not the secret: give the whole secret your receiver verifies with'
      : `${bare.startsWith('whsec_') ? `whsec_ and ${bare.length - 6} characters` : `"${bare.slice(0, 6)}..."`}${bare === text ? '' : ' with a line break or space around them (a secret saved with its final newline?): remove it, from the receiver\'s copy too'}`
    throw new SetupError(`${source} must be whsec_ and at least 16 printable characters without spaces (sandbox webhook sign and the receivers use it whole), got ${shown}`)
  }
  return text
}
