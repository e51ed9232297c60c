import { eventTypeSchema } from '../schemas/responses/webhook-views.js'
import type { EventType } from './types.js'
import { findClosestMatch } from '../text/closest-match.js'

/** Every event type of spec part 6.2, in the spec's order (from the schema the document uses). */
export const EVENT_TYPES: readonly EventType[] = eventTypeSchema.options

/** The event type NAME stands for: itself, or with `sandbox.` put before a short name (`loan.issued`). */
export function findEventType(name: string): EventType | undefined {
  const full = name.startsWith('sandbox.') ? name : `sandbox.${name}`
  return EVENT_TYPES.find((type) => type === full)
}

/** The event type a name most likely meant: the one it stands for, or the one a typo away (`loan.isued`). */
export function findEventTypeMeant(name: string): EventType | undefined {
  return findEventType(name) ?? (findClosestMatch(name.startsWith('sandbox.') ? name : `sandbox.${name}`, EVENT_TYPES) as EventType | undefined)
}

/**
 * Whether an endpoint subscribed to EVENTS (undefined: all) is sent an event of TYPE. The test
 * event goes to an endpoint whatever its list holds: it is how a receiver is checked.
 */
export function takesEvent(events: readonly string[] | undefined, type: string): boolean {
  return type === 'sandbox.webhook.test' || events === undefined || events.includes(type)
}
