import type { EventObject } from '../schemas/responses/event-objects.js'
import type { EventType } from '../domain/types.js'
import { isJsonObject } from '../json-text/is-json-object.js'
import { verifyDelivery, WebhookVerificationError, type HeaderSource } from './signature.js'
import { readWebhookBody, readWebhookText, type WebhookBody } from './raw-body.js'
import { checkSingleInput } from './verify-input.js'

/** A webhook event as the sandbox delivers it, `data.object` typed by `type` (the OpenAPI document's `webhooks`). */
export type SandboxWebhookEvent = {
  [T in EventType]: { id: string; type: T; created_at: string; api_version: string; data: { object: EventObject<T> } }
}[EventType]

/**
 * Verifies a delivery (see verifyWebhook) and returns its body as a typed event, as Stripe's
 * `constructEvent` does: a receiver in TypeScript narrows on `event.type` and reads
 * `event.data.object` with its type. The signature covers the body, not the headers, so the id
 * and event headers must name the signed body's event too (`header_mismatch`): otherwise a replayed
 * body under a fresh id would pass deduplication by header. The object's fields are not checked:
 * the signature says the sandbox sent them. `secret` may list several, as for verifyWebhook.
 */
export function constructWebhookEvent(input: { secret: string | readonly string[]; body: WebhookBody; headers: HeaderSource; toleranceSeconds?: number | undefined; now?: number | undefined }): SandboxWebhookEvent {
  checkSingleInput('constructWebhookEvent', input, arguments.length)
  const { eventId, eventType } = verifyDelivery(input, 'constructWebhookEvent')
  let event: unknown
  try {
    event = JSON.parse(readWebhookText(readWebhookBody(input.body)))
  } catch (error) {
    throw new WebhookVerificationError('malformed_body', `the signed body is not JSON (${(error as Error).message})`)
  }
  if (!isJsonObject(event) || typeof event.id !== 'string' || typeof event.type !== 'string' || typeof event.data !== 'object' || event.data === null) {
    throw new WebhookVerificationError('malformed_body', 'the signed body is not an event: an object with id, type and data')
  }
  if (event.id !== eventId || event.type !== eventType) {
    throw new WebhookVerificationError('header_mismatch', `the headers name event ${eventId} (${eventType}), the signed body ${event.id} (${event.type})`)
  }
  return event as SandboxWebhookEvent
}
