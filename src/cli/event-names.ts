import type { EventType } from '../domain/types.js'
import { CliError } from './cli-error.js'

/** An event type as typed on the command line: `loan.issued` stands for `sandbox.loan.issued`. */
export function readEventName(name: string, types: readonly EventType[]): EventType {
  const full = name.startsWith('sandbox.') ? name : `sandbox.${name}`
  const found = types.find((type) => type === full)
  if (!found) throw new CliError(`unknown event "${name}": one of ${types.join(', ')}`)
  return found
}
