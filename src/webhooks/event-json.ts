import type { SandboxEvent } from '../domain/types.js'
import { appendJsonFields, stringifyOnce } from '../storage/json-memo.js'

/**
 * The JSON text of an event: the body its deliveries send, and what session documents store for
 * it. Made once per event object, however many deliveries and saves share it; the object it
 * announces is the one the session's book holds, so its text is shared with the book's. Stored
 * JSON parses back to an equal object, so the text after a restart is byte for byte the text before.
 */
export function stringifyEvent(event: SandboxEvent): string {
  return stringifyOnce(event, buildEventJson)
}

function buildEventJson(event: SandboxEvent): string {
  const { data, ...head } = event
  const keys = Object.keys(event)
  const object = data?.object
  // Only the shape createEvent builds (data last, holding just `object`) is assembled from parts.
  if (keys[keys.length - 1] !== 'data' || typeof object !== 'object' || object === null || Object.keys(data).length !== 1) return JSON.stringify(event)
  return appendJsonFields(JSON.stringify(head), `"data":{"object":${stringifyOnce(object)}}`)
}
