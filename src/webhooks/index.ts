/**
 * What a webhook receiver needs (`partner-sandbox/webhooks`): verify a delivery's signature and
 * parse its event, or sign one by hand, without loading the server the package root does.
 */
export { signWebhook, verifyWebhook, computeSignature, generateWebhookSecret, WebhookVerificationError, DEFAULT_TOLERANCE_SECONDS, type WebhookVerificationCode, type HeaderSource } from './signature.js'
export { constructWebhookEvent, type SandboxWebhookEvent } from './construct-event.js'
export type { WebhookBody } from './raw-body.js'
export type { EventObject } from '../schemas/responses/event-objects.js'
export type { EventType } from '../domain/types.js'
