import type { ClientAnswer, ClientRequest } from '../client/request-types.js'
import { SandboxConnectionError } from '../client/api-error.js'
import { isGatewayError } from '../client/retry-rules.js'
import { describeForeignAnswer, describeGatewayError, describeHttpsOnly, describeRedirect } from './step-notes.js'

/**
 * A redirect, a proxy's 502/503/504, a TLS server's 400 to plain HTTP, or a page that is no JSON
 * (another service on the port) that a step did not expect: every later request would meet the
 * same moved URL, dead server, refusal or service, a setup problem like a server that cannot be
 * reached, which stops the run (exit 2) instead of failing each scenario as if the API had.
 * REMOTE: the base URL is not on this machine.
 */
export function throwIfUnreachable(baseUrl: string, request: ClientRequest, answer: ClientAnswer, expectedStatus: number | undefined, remote = false): void {
  // Checked whatever the status: the API answers JSON to every request, so a step cannot expect a page.
  const foreign = describeForeignAnswer(baseUrl, request, answer, remote)
  if (foreign) throw new SandboxConnectionError(baseUrl, answer.attempts, { cause: undefined, message: foreign })
  if (answer.status === expectedStatus) return
  if (answer.status >= 300 && answer.status < 400) throw new SandboxConnectionError(baseUrl, answer.attempts, { cause: undefined, message: describeRedirect(answer, request, baseUrl) })
  if (isGatewayError(answer)) throw new SandboxConnectionError(baseUrl, answer.attempts, { cause: undefined, message: describeGatewayError(answer, request) })
  const httpsOnly = describeHttpsOnly(baseUrl, answer)
  if (httpsOnly) throw new SandboxConnectionError(baseUrl, answer.attempts, { cause: undefined, message: httpsOnly })
}
