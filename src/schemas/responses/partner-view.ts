import { z } from 'zod'

const nullableText = z.string().nullable()

/** The partner profile: the key's own, or the fixture default until POST /partner. */
export const partnerProfileViewSchema = z
  .object({
    id: z.string().optional().describe('Present once the key created its profile.'),
    name: z.string(),
    email: nullableText,
    website: nullableText,
    payout_address: nullableText,
    referral_code: z.string(),
    created_at: z.string().optional(),
    updated_at: z.string().optional(),
  })
  .meta({ id: 'PartnerProfile' })

/** The profile once the key saved it (POST /partner): what `sandbox.partner.updated` carries. */
export const savedPartnerProfileSchema = partnerProfileViewSchema
  .extend({ id: z.string().describe('`ptr_` + an id derived from the key; the same on every update.') })
  .required({ created_at: true, updated_at: true })
  .meta({ id: 'SavedPartnerProfile', description: 'The profile a key created or updated, as sandbox.partner.updated carries it.' })

/** A row of the level table. */
export const partnerLevelSchema = z.object({ level: z.string(), min_volume_usd: z.number(), reward_percent: z.number() }).meta({ id: 'PartnerLevel' })

const dealLoanSchema = z.object({ loan_id: z.string(), amount: z.number(), currency: z.string(), status: z.string(), created_at: z.string() })

/** The partner block: GET/POST /partner, and GET state's `partner`. */
export const partnerViewSchema = z
  .object({
    profile: partnerProfileViewSchema,
    links: z.array(z.object({
      code: z.string(),
      url: z.string(),
      deals: z.array(z.object({ external_client_id: nullableText, client_reference: nullableText, loans: z.array(dealLoanSchema), volume_usd: z.number() }))
        .describe('Loans created with external_client_id / client_reference, grouped by that pair.'),
    })),
    levels: z.object({
      table: z.array(partnerLevelSchema),
      current: partnerLevelSchema,
      volume_usd: z.number().describe('Principal of every loan issued so far.'),
      next: z.object({ level: z.string(), min_volume_usd: z.number(), remaining_usd: z.number() }).nullable(),
    }),
    rewards: z.object({
      accrued_usd: z.number(),
      paid_usd: z.number(),
      entries: z.array(z.object({ loan_id: z.string(), origination_fee: z.number(), reward_percent: z.number(), amount_usd: z.number(), at: z.string() }))
        .describe('One entry per issued loan and per increase_loan: its origination fee × reward_percent / 100, at the level the volume had reached before it. An entry never changes once accrued.'),
    }),
  })
  .meta({ id: 'Partner', description: 'Partner profile, referral links, levels and rewards (decisions.md "Partner profile").' })
