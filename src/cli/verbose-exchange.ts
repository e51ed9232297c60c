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

function formatBody(text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined
  return show(showBody(text))
}

/**
 * One attempt of a request as `sandbox run --verbose` prints it, curl -v style: `>` lines for what
 * was sent (the key and webhook secrets masked), `<` lines for the status, every header and the body of the answer, or
 * the network error the attempt ended in. Control characters are escaped: headers and bodies come
 * from the server.
 */
export function formatExchange(method: string, wire: PreparedRequest, answer: ClientAnswer | Error): string[] {
  const lines = [`> ${show(method)} ${show(wire.url)}`]
  for (const [name, value] of Object.entries(wire.headers)) lines.push(`> ${show(name)}: ${show(name === 'authorization' ? maskAuthorization(value) : value)}`)
  const sentBody = formatBody(wire.text)
  if (sentBody !== undefined) lines.push(`> ${sentBody}`)
  if (answer instanceof Error) {
    lines.push(`< no answer: ${show(describeNetworkError(answer))}`)
    return lines
  }
  lines.push(`< ${answer.status}${answer.attempts > 1 ? ` (attempt ${answer.attempts})` : ''}`)
  answer.headers.forEach((value, name) => {
    lines.push(`< ${show(name)}: ${show(value)}`)
  })
  const body = formatBody(answer.text)
  if (answer.bodyUnread) lines.push('< (body not read: the step closes the connection after the status line)')
  else if (body !== undefined) lines.push(`< ${body}`)
  return lines
}
