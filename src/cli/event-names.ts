import type { EventType } from '../domain/types.js'
import { EVENT_TYPES } from '../webhooks/types.js'
import { CliError } from './cli-error.js'
import { suggestClosest } from '../text/closest-match.js'

/** An event type as typed on the command line: `loan.issued` stands for `sandbox.loan.issued`. */
export function readEventName(name: string): EventType {
  const full = name.startsWith('sandbox.') ? name : `sandbox.${name}`
  const found = EVENT_TYPES.find((type) => type === full)
  if (!found) throw new CliError(`unknown event "${name}"${suggestClosest(full, EVENT_TYPES)}: one of ${EVENT_TYPES.join(', ')}`)
  return found
}
