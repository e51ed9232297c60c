import type { EventType } from '../domain/types.js'
import { EVENT_TYPES, findEventType, findEventTypeMeant } from '../domain/event-types.js'
import { CliError } from './cli-error.js'

/** An event type as typed on the command line: `loan.issued` stands for `sandbox.loan.issued`. */
export function readEventName(name: string): EventType {
  const found = findEventType(name)
  if (found) return found
  const meant = findEventTypeMeant(name)
  throw new CliError(`unknown event "${name}"${meant === undefined ? '' : ` (did you mean ${meant}?)`}: one of ${EVENT_TYPES.join(', ')}`)
}
