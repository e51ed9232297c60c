import type { z } from 'zod'
import { loanApplicationSchema, loanSchema, repaymentOperationSchema } from './loan-objects.js'
import { savedPartnerProfileSchema } from './partner-view.js'
import { webhookTestObjectSchema, type eventTypeSchema } from './webhook-views.js'

/**
 * The `data.object` of each event type (decisions.md "Webhooks"): the OpenAPI document types each
 * webhook entry with it, and createEvent's callers are type-checked against it.
 */
export const eventObjectSchemas = {
  'sandbox.loan_application.updated': loanApplicationSchema,
  'sandbox.loan.issued': loanSchema,
  'sandbox.loan.updated': loanSchema,
  'sandbox.repayment.updated': repaymentOperationSchema,
  'sandbox.repayment.settled': repaymentOperationSchema,
  // Both the last repayment step and a direct action that gives BTC back: the loan they changed.
  'sandbox.collateral.returned': loanSchema,
  'sandbox.partner.updated': savedPartnerProfileSchema,
  'sandbox.webhook.test': webhookTestObjectSchema,
} as const satisfies Record<z.infer<typeof eventTypeSchema>, z.ZodType>

/** The `data.object` an event of type `T` carries. */
export type EventObject<T extends keyof typeof eventObjectSchemas> = z.infer<(typeof eventObjectSchemas)[T]>
