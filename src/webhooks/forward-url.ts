import { SetupError } from '../errors/setup-error.js'

/**
 * Checks a `--webhook-forward-to` URL (http or https; local targets are the point of it) and
 * returns it normalized. Throws SetupError naming the flag, so the CLI exits 2.
 */
export function parseForwardUrl(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new SetupError(`--webhook-forward-to "${text}" is not a URL (e.g. http://localhost:3000/webhooks)`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new SetupError(`--webhook-forward-to must be an http(s) URL, not ${url.protocol}`)
  return url.href
}
