import { z } from 'zod'
import { EMAIL_PATTERN } from './email-address.js'

const optionalText = (max: number, description: string) => z.string().trim().min(1).max(max).nullable().optional().describe(`${description} null clears it.`)

/** POST /api/sandbox/partner: creates or updates the partner profile (a name is required on first create). */
export const partnerProfileSchema = z.object({
  name: z.string().trim().min(1).max(200).optional().describe('Partner name; required when the profile is first created.'),
  email: z.email({ pattern: EMAIL_PATTERN, error: 'must be an email address (name@example.com)' }).max(254).meta({ format: 'idn-email' }).nullable().optional().describe('Contact email; internationalized domains are taken, in Unicode or xn-- form. null clears it.'),
  website: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).max(2048).nullable().optional().describe('Partner website (http or https). null clears it.'),
  payout_address: optionalText(128, 'Where partner rewards would be paid.'),
})

/** A validated partner profile body. */
export type PartnerProfileInput = z.infer<typeof partnerProfileSchema>
