import type { z } from 'zod'
import type { webhookTestObjectSchema } from '../schemas/responses/webhook-views.js'
import { createId } from '../server/ids.js'

/** The `data.object` of a `sandbox.webhook.test` event for an endpoint. */
export function createTestEventObject(endpointId: string, id: string = createId('test')): z.infer<typeof webhookTestObjectSchema> {
  return { id, object: 'webhook_test', endpoint_id: endpointId, message: 'Test event from the partner sandbox.' }
}
