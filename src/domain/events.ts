import type { EventObject } from '../schemas/responses/event-objects.js'
import type { DomainContext, EventType, SandboxEvent } from './types.js'

/**
 * Builds a webhook event for `object`. The domain never mutates an object once built (every step
 * makes new ones), so the event can hold it as it is without a copy. `object` must have the type
 * the OpenAPI document gives events of `type`.
 */
export function createEvent<T extends EventType>(ctx: DomainContext, type: T, object: EventObject<T>): SandboxEvent {
  return {
    id: ctx.newId('evt'),
    type,
    created_at: ctx.now,
    api_version: ctx.config.api_version,
    data: { object },
  }
}
