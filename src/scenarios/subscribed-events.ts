import { EVENT_TYPES, findEventType, takesEvent } from '../domain/event-types.js'
import type { EventType } from '../domain/types.js'
import type { ScenarioStep } from './scenario-schema.js'

/**
 * The events each key's endpoint takes, as a scenario's steps register the runner's receiver, for
 * the file check: a wait for an event none of them takes could only time out. A registration
 * whose list it cannot read (a variable, a name the server refuses) counts as taking every event.
 */
export class SubscribedEvents {
  private readonly byKey = new Map<string, { step: number; events: readonly EventType[] }>()

  /** Notes STEP (its index) when it registers the receiver. */
  track(step: ScenarioStep, index: number): void {
    if (!('request' in step) || step.request.method !== 'POST' || step.request.path !== '/api/sandbox/webhooks') return
    const body = step.request.body as { url?: unknown; events?: unknown } | undefined
    if (typeof body?.url !== 'string' || !body.url.includes('{{$receiver_url}}')) return
    const events = Array.isArray(body.events) && body.events.every((type) => EVENT_TYPES.includes(type as EventType)) ? (body.events as EventType[]) : EVENT_TYPES
    this.byKey.set(step.request.key ?? 'main', { step: index, events })
  }

  /** Why no delivery of TYPE can come, or undefined when one can (or the type is not known here). */
  explainMissing(type: string): string | undefined {
    const full = findEventType(type)
    if (full === undefined || this.byKey.size === 0) return undefined
    const registrations = [...this.byKey.values()]
    if (registrations.some(({ events }) => takesEvent(events, full))) return undefined
    const { step, events } = registrations.at(-1)!
    return `the endpoint step ${step + 1} registers takes only ${events.join(', ')}, so no ${full} is delivered to it: add it to that step's events (or leave events out for all)`
  }
}
