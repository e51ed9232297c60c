import type { SandboxEvent } from '../domain/types.js'

const texts = new WeakMap<SandboxEvent, string>()

/**
 * The JSON text of an event: the body its deliveries send, and what session documents store for
 * it. Made once per event object, however many deliveries and saves share it. Stored JSON parses
 * back to an equal object, so the text after a restart is byte for byte the text before.
 */
export function stringifyEvent(event: SandboxEvent): string {
  let text = texts.get(event)
  if (text === undefined) texts.set(event, (text = JSON.stringify(event)))
  return text
}
