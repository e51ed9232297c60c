import type { DomainContext, EventType, SandboxEvent } from './types.js'

/**
 * Builds a webhook event for `object`. The domain never mutates an object once built (every step
 * makes new ones), so the event can hold it as it is without a copy.
 */
export function createEvent(ctx: DomainContext, type: EventType, object: unknown): SandboxEvent {
  return {
    id: ctx.newId('evt'),
    type,
    created_at: ctx.now,
    api_version: ctx.config.api_version,
    data: { object },
  }
}
