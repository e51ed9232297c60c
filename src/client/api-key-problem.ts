import { NOT_IN_HEADER } from './header-value.js'

/** Names of the characters a key read from a file most often ends with. */
const LINE_ENDS: Record<string, string> = { '\n': 'a line break', '\r': 'a carriage return' }

/**
 * What is wrong with API_KEY as the client's key, worded to follow nothing (it starts with
 * `apiKey`), or undefined. The key itself is never shown: the message ends up in logs.
 */
export function findApiKeyProblem(apiKey: string): string | undefined {
  // The server's 401 then asked for "Authorization: Bearer sk_sandbox_...", which had been sent.
  if (/^bearer\s/i.test(apiKey)) return 'apiKey starts with "Bearer ": give the key alone; the client sends "Authorization: Bearer KEY" itself'
  const bad = NOT_IN_HEADER.exec(apiKey)
  if (!bad) return undefined
  const char = bad[0]
  const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`
  const cannot = 'which an HTTP header cannot carry, so no request could be sent'
  // readFileSync keeps a key file's last line break; a file saved with CRLF ends with \r\n.
  if (LINE_ENDS[char] && /^[\r\n]+$/.test(apiKey.slice(bad.index))) {
    return `apiKey ends with ${LINE_ENDS[char]} (${code}), ${cannot}: trim it (a key read from a file keeps its last line break; one saved with CRLF line ends its \\r too)`
  }
  return `apiKey holds ${code}, ${cannot}: give the key as the server issued it (sk_sandbox_ and letters, digits or _)`
}
