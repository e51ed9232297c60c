import { SandboxError } from '../errors/sandbox-error.js'
import { findClosestMatch } from '../text/closest-match.js'

/**
 * A 400 saying that field F is missing, for a body that holds a field the request does not know
 * and that is one typo away from F (`colateral_btc`): the same error, its message naming that
 * field, which the answer would otherwise leave the partner to find. Else the error unchanged.
 */
export function hintMisspeltField(error: SandboxError, ignored: readonly string[]): SandboxError {
  const field = error.details?.field
  const issue = error.details?.issue
  if (typeof field !== 'string' || typeof issue !== 'string' || !issue.startsWith('is required')) return error
  const typo = ignored.find((name) => findClosestMatch(name, [field]) === field)
  if (typo === undefined) return error
  return new SandboxError(error.code, `${error.message} The body has ${JSON.stringify(typo)}, which is no field of this request: did you mean ${field}?`, error.details)
}
