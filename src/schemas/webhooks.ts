import { z } from 'zod'
import { EVENT_TYPES } from '../webhooks/types.js'

/**
 * POST /api/sandbox/webhooks. The URL and the events are checked by the webhook code rather than
 * by zod, so that their failures carry the spec's own codes (WEBHOOK_URL_REQUIRED,
 * WEBHOOK_URL_INVALID, WEBHOOK_EVENTS_INVALID). The metadata gives the OpenAPI document the shape
 * that code accepts, which zod's `unknown` cannot say: a url on every call, a non-empty events list.
 */
export const webhookEndpointSchema = z.object({
  url: z.unknown().optional().meta({ type: 'string', description: 'Public https:// URL that receives the events (http and local hosts only with serve --allow-local-webhooks); required on every call, updates and rotate_secret included.' }),
  events: z.unknown().optional().meta({ type: 'array', minItems: 1, items: { $ref: '#/components/schemas/EventType' }, description: `Event types to receive; omitted means all: ${EVENT_TYPES.join(', ')}.` }),
  rotate_secret: z.boolean().optional().describe('true: issue a new signing secret and return it in full once.'),
}).meta({ required: ['url'] })

/** A validated POST /api/sandbox/webhooks body. */
export type WebhookEndpointInput = z.infer<typeof webhookEndpointSchema>

/** POST /api/sandbox/webhooks/retry: one delivery, a batch of at most 50, or {} for every failed one. */
export const webhookRetrySchema = z.object({
  delivery_id: z.string().min(1).optional().describe('Retry this delivery.'),
  delivery_ids: z.array(z.string().min(1)).min(1).max(50).optional().describe('Retry these deliveries (at most 50, delivery_id included when both are sent).'),
}).refine((body) => (body.delivery_ids?.length ?? 0) + (body.delivery_id === undefined ? 0 : 1) <= 50, {
  path: ['delivery_ids'],
  message: 'must hold at most 50 ids, counting delivery_id',
})

/** A validated retry body. */
export type WebhookRetryInput = z.infer<typeof webhookRetrySchema>

/** Bodies of endpoints that take none (DELETE /webhooks, POST /webhooks/test): anything is ignored. */
export const emptyBodySchema = z.object({})
