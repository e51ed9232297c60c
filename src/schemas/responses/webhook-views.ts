import { z } from 'zod'

/** Every event type of spec part 6.2. */
export const eventTypeSchema = z
  .enum([
    'sandbox.loan_application.updated',
    'sandbox.loan.issued',
    'sandbox.loan.updated',
    'sandbox.repayment.updated',
    'sandbox.repayment.settled',
    'sandbox.collateral.returned',
    'sandbox.partner.updated',
    'sandbox.webhook.test',
  ])
  .meta({ id: 'EventType' })

/** The `data.object` of a `sandbox.webhook.test` event. */
export const webhookTestObjectSchema = z
  .object({
    id: z.string().describe('`test_` + random id.'),
    object: z.literal('webhook_test'),
    endpoint_id: z.string().describe('The endpoint the test was sent for (`we_...`).'),
    message: z.string(),
  })
  .meta({ id: 'WebhookTestObject', description: 'What POST /webhooks/test sends as data.object.' })

/** A webhook event body, exactly as delivered; each event type's `data.object` is typed in event-objects.ts. */
export const sandboxEventSchema = z
  .object({
    id: z.string().describe('`evt_` + random id; also the x-service-webhook-id header.'),
    type: eventTypeSchema,
    created_at: z.string(),
    api_version: z.string(),
    data: z.object({ object: z.unknown().describe('The application, loan, repayment operation, partner profile or test payload that changed; each event type\'s webhook entry names its schema.') }),
  })
  .meta({ id: 'WebhookEvent' })

/** The endpoint as the API shows it. */
export const webhookEndpointViewSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    enabled: z.boolean(),
    events: z.array(eventTypeSchema),
    secretPreview: z.string().describe('`whsec_...` + the last 4 characters.'),
    signingSecret: z.string().optional().describe('Only in the answer that created the endpoint or rotated its secret.'),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' })

/** One entry of the delivery log. */
export const deliveryViewSchema = z
  .object({
    id: z.string(),
    event_id: z.string(),
    event_type: eventTypeSchema,
    target: z.enum(['endpoint', 'forward']).describe('The key\'s endpoint, or serve\'s --webhook-forward-to URL.'),
    url: z.string(),
    status: z.enum(['pending', 'delivered', 'retrying', 'failed']),
    attempts: z.number().int(),
    next_attempt_at: z.string().nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    request_id: z.string().nullable().describe('(sandbox) The request whose change queued the event: the `request_id` of its answer and of its request log line (`sandbox logs`). Null for deliveries queued by an earlier sandbox version.'),
  })
  .meta({ id: 'WebhookDelivery' })

/** `{ endpoint, deliveries }`: the webhook state of a key. */
export const webhookStateViewSchema = z.object({
  endpoint: webhookEndpointViewSchema.nullable(),
  deliveries: z.array(deliveryViewSchema).describe('The 50 most recent deliveries, newest first.'),
})
