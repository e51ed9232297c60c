import type { ClientAnswer, ClientRequest } from '../client/request-types.js'
import { SandboxConnectionError } from '../client/api-error.js'
import { isGatewayError } from '../client/retry-rules.js'
import { describeGatewayError, describeHttpsOnly, describeRedirect } from './step-notes.js'

/**
 * A redirect, a proxy's 502/503/504 or a TLS server's 400 to plain HTTP that a step did not
 * expect: every later request would meet the same moved URL, dead server or refusal, a setup problem like a server that cannot be reached, which
 * stops the run (exit 2) instead of failing each scenario as if the API had.
 */
export function throwIfUnreachable(baseUrl: string, request: ClientRequest, answer: ClientAnswer, expectedStatus: number | undefined): void {
  if (answer.status === expectedStatus) return
  if (answer.status >= 300 && answer.status < 400) throw new SandboxConnectionError(baseUrl, answer.attempts, { cause: undefined, message: describeRedirect(answer, request, baseUrl) })
  if (isGatewayError(answer)) throw new SandboxConnectionError(baseUrl, answer.attempts, { cause: undefined, message: describeGatewayError(answer, request) })
  const httpsOnly = describeHttpsOnly(baseUrl, answer)
  if (httpsOnly) throw new SandboxConnectionError(baseUrl, answer.attempts, { cause: undefined, message: httpsOnly })
}
