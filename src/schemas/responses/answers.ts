import { z } from 'zod'
import { ErrorCodes, type ErrorCode } from '../../errors/codes.js'
import { sandboxConfigSchema } from '../config.js'
import { loanStateSchema } from './loan-objects.js'
import { partnerViewSchema } from './partner-view.js'
import { deliveryViewSchema, eventTypeSchema, webhookStateViewSchema } from './webhook-views.js'

/** An example in the format: mock servers (`prism mock`) otherwise answer "string", which fails the pattern. */
export const REQUEST_ID_EXAMPLE = 'req_5f2c9a1e7b3d4c8a9e10'
const requestId = z.string().regex(/^req_/).meta({ description: '`req_` + random id; also the x-request-id header.', examples: [REQUEST_ID_EXAMPLE] })
const replayed = z.boolean().describe('true when this is the stored answer of an earlier request with the same Idempotency-Key.')

/** The error envelope of every non-2xx answer. */
export const errorAnswerSchema = z
  .object({
    request_id: requestId,
    error_code: z.enum(Object.keys(ErrorCodes) as [ErrorCode, ...ErrorCode[]]),
    error: z.string().describe('A human-readable explanation.'),
    details: z.record(z.string(), z.unknown()).optional().describe('Structured context, e.g. `reason` of a FLOW_CONFLICT or the invalid `field`.'),
    idempotency_replayed: z.boolean().optional().describe('On a POST: true when this stored 404 or 409 is replayed for the same Idempotency-Key.'),
  })
  .meta({ id: 'Error', description: 'Every error answer (decisions.md "Envelope").' })

/** GET /config. */
export const configAnswerSchema = sandboxConfigSchema.extend({ request_id: requestId }).meta({ id: 'ConfigAnswer' })
/** GET /loans. */
export const loanStateAnswerSchema = loanStateSchema.extend({ request_id: requestId }).meta({ id: 'LoanStateAnswer' })
/** Every loan POST. */
export const loanWriteAnswerSchema = loanStateSchema.extend({ request_id: requestId, idempotency_replayed: replayed }).meta({ id: 'LoanWriteAnswer' })
/** GET /state. */
export const stateAnswerSchema = z.object({ request_id: requestId, loans: loanStateSchema, partner: partnerViewSchema }).meta({ id: 'StateAnswer' })
/** GET /partner. */
export const partnerAnswerSchema = partnerViewSchema.extend({ request_id: requestId }).meta({ id: 'PartnerAnswer' })
/** POST /partner. */
export const partnerWriteAnswerSchema = partnerViewSchema.extend({ request_id: requestId, idempotency_replayed: replayed }).meta({ id: 'PartnerWriteAnswer' })
/** GET and DELETE /webhooks. */
export const webhookAnswerSchema = webhookStateViewSchema.extend({ request_id: requestId }).meta({ id: 'WebhookAnswer' })
/** POST /webhooks. */
export const webhookWriteAnswerSchema = webhookStateViewSchema.extend({ request_id: requestId, idempotency_replayed: replayed }).meta({ id: 'WebhookWriteAnswer' })
/** POST /webhooks/test. */
export const webhookTestAnswerSchema = webhookStateViewSchema
  .extend({
    request_id: requestId,
    idempotency_replayed: replayed,
    event: z.object({ id: z.string(), type: eventTypeSchema }),
    delivery: deliveryViewSchema.describe('The delivery queued for the test event; its outcome appears in the log.'),
  })
  .meta({ id: 'WebhookTestAnswer' })
/** POST /webhooks/retry. */
export const webhookRetryAnswerSchema = webhookStateViewSchema
  .extend({ request_id: requestId, idempotency_replayed: replayed, retried: z.array(z.string()).describe('Ids of the deliveries put back in their queue with a fresh schedule, still in event order: one behind an earlier delivery that is retrying waits for it.') })
  .meta({ id: 'WebhookRetryAnswer' })
