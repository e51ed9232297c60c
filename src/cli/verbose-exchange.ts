import { describeNetworkError } from '../client/api-error.js'
import type { ClientAnswer, PreparedRequest } from '../client/request-types.js'
import { maskApiKey } from '../keys/api-key-text.js'
import { escapeControls as show } from '../text/escape-controls.js'
import { showBody } from '../text/shown-body.js'


/**
 * An Authorization value as a CI log may show it: a sandbox key masked as `sandbox logs` and
 * `keys list` mask it (so the lines can be matched), anything else hidden whole.
 */
export function maskAuthorization(value: string): string {
  const match = /^Bearer\s+(sk_sandbox_\S*)$/i.exec(value)
  return match ? `Bearer ${maskApiKey(match[1]!)}` : '****'
}

function formatBody(text: string | undefined, mask: (text: string) => string): string | undefined {
  if (text === undefined || text === '') return undefined
  // Masked before showBody cuts it: a cut could leave part of a secret that no longer matches.
  return show(showBody(mask(text)))
}

/**
 * One attempt of a request as `sandbox run --verbose` prints it, curl -v style: `>` lines for what
 * was sent (the key and webhook secrets masked), `<` lines for the status, every header and the body of the answer, or
 * the network error the attempt ended in. Control characters are escaped: headers and bodies come
 * from the server. MASK masks more than secret fields: the secrets a run has seen, wherever a
 * variable put them.
 */
export function formatExchange(method: string, wire: PreparedRequest, answer: ClientAnswer | Error, mask: (text: string) => string = (text) => text): string[] {
  const lines = [`> ${show(method)} ${show(mask(wire.url))}`]
  for (const [name, value] of Object.entries(wire.headers)) lines.push(`> ${show(name)}: ${show(name === 'authorization' ? maskAuthorization(value) : mask(value))}`)
  const sentBody = formatBody(wire.text, mask)
  if (sentBody !== undefined) lines.push(`> ${sentBody}`)
  if (answer instanceof Error) {
    lines.push(`< no answer: ${show(describeNetworkError(answer))}`)
    return lines
  }
  lines.push(`< ${answer.status}${answer.attempts > 1 ? ` (attempt ${answer.attempts})` : ''}`)
  answer.headers.forEach((value, name) => {
    lines.push(`< ${show(name)}: ${show(mask(value))}`)
  })
  const body = formatBody(answer.text, mask)
  if (answer.bodyUnread) lines.push('< (body not read: the step closes the connection after the status line)')
  else if (body !== undefined) lines.push(`< ${body}`)
  return lines
}
