import type { DomainContext, EventType, SandboxEvent } from './types.js'

/** Builds a webhook event for `object`, copied so later state changes cannot alter it. */
export function createEvent(ctx: DomainContext, type: EventType, object: unknown): SandboxEvent {
  return {
    id: ctx.newId('evt'),
    type,
    created_at: ctx.now,
    api_version: ctx.config.api_version,
    data: { object: structuredClone(object) },
  }
}
