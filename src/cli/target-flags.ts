import { CliError } from './cli-error.js'

/**
 * `--base-url`, else SANDBOX_BASE_URL: checked for what fetch would refuse at every attempt (a
 * retried network error, and every line printing the password).
 */
export function readBaseUrl(flag: string | undefined): string | undefined {
  const baseUrl = flag ?? process.env.SANDBOX_BASE_URL
  if (baseUrl && !/^https?:\/\//.test(baseUrl)) throw new CliError(`--base-url must be an http(s) URL, got "${baseUrl}"`)
  const withUser = baseUrl && URL.canParse(baseUrl) ? new URL(baseUrl) : undefined
  if (withUser && (withUser.username || withUser.password)) {
    throw new CliError(`--base-url cannot hold a user name or password (${withUser.protocol}//****@${withUser.host}): fetch sends none; the API takes its key from --api-key`)
  }
  return baseUrl || undefined
}

/** `--api-key`, else SANDBOX_API_KEY (empty means none, as a CI secret that is not set gives). */
export function readApiKey(flag: string | undefined): string | undefined {
  const apiKey = flag ?? (process.env.SANDBOX_API_KEY || undefined)
  const source = flag === undefined ? 'SANDBOX_API_KEY' : '--api-key'
  if (apiKey !== undefined) checkApiKey(apiKey, source)
  return apiKey
}

/** A sandbox key that can be sent in a header; `source` names where it came from. */
export function checkApiKey(apiKey: string, source: string): void {
  // Spec 5: sandbox keys start with sk_sandbox_. Anything else is a mistake, and a live key must
  // not be sent to requests that open loans.
  if (!apiKey.startsWith('sk_sandbox_')) {
    const bearer = /^bearer\s/i.test(apiKey) ? ' (the key alone: sandbox sends "Authorization: Bearer KEY" itself)' : ''
    throw new CliError(`${source} must be a sandbox key (sk_sandbox_...), got "${apiKey.slice(0, 12)}${apiKey.length > 12 ? '...' : ''}"${bearer}`)
  }
  // A key read from a file saved with CRLF, or pasted with a space, cannot be sent in a header:
  // every request failed (as if the API had) with the whole key in the message.
  if (!/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new CliError(`${source} holds a space, line break or other character a key cannot have (a key file saved with CRLF line ends, or a trailing newline?): "${apiKey.slice(0, 12)}..."`)
  }
}
